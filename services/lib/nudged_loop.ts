/**
 * One pass of a worker's work at a time, as the webhook and mail outboxes
 * run theirs: `nudge()` runs a pass now, or once more right after the pass
 * under way however often it was nudged meanwhile; after a pass the next one
 * runs by itself after `nextDelayMs()` (read when that pass ends, so a worker
 * can poll faster while work waits). `close()` stops it and waits for the
 * pass under way. Passes run outside any request's trace and log scope: a
 * nudge may come from a request.
 */
import { detached } from "./telemetry.ts";

export class NudgedLoop {
  readonly #pass: () => Promise<void>;
  readonly #nextDelayMs: () => number;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(pass: () => Promise<void>, nextDelayMs: () => number) {
    this.#pass = pass;
    this.#nextDelayMs = nextDelayMs;
  }

  nudge(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = detached(() => this.#pass()).finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.nudge();
      } else if (!this.#closed) {
        this.#timer = setTimeout(() => this.nudge(), this.#nextDelayMs());
      }
    });
  }

  /** Asks for another pass right after the one under way (it left work behind: a full batch). */
  again(): void {
    this.#again = true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
