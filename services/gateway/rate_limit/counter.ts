/**
 * Fixed one-minute windows: a counter belongs to the minute it was counted
 * in and starts again at zero when the next minute begins.
 */

import { setImmediate } from "node:timers";

export const WINDOW_MS = 60_000;

export interface CounterHit {
  name: string;
  /** 0 reads the counter without counting. */
  by: number;
}

export interface WindowCounter {
  /** Adds each increment to its counter in the current window; returns the new values in order. */
  hit(hits: readonly CounterHit[], now: number): Promise<number[]>;
}

export const windowOf = (now: number) => Math.floor(now / WINDOW_MS);

/**
 * Counters in this process; exact for a single gateway replica. Each hit is
 * counted when asked, in order; the answers to the hits of one turn of the
 * event loop are given together at the start of the next, as the Redis
 * counter's are (its one call per turn comes back in a later turn). Under
 * load the requests of a turn then finish and send their answers together:
 * on the hot read that took the system's CPU per request from 94-107 to
 * 64-76 µs (fewer turns of Deno's HTTP layer and fewer wake-ups in the
 * kernel per answer; docs/benchmarks.md, "Content reads"). setImmediate, not
 * a timer: a lone request waits only for the end of its turn, not for the
 * timers' millisecond (which added 1 to 2 ms to a cold read's p50).
 */
export class LocalCounter implements WindowCounter {
  #window = -1;
  #counts = new Map<string, number>();
  #answers: (() => void)[] = [];

  hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    const values = this.hitSync(hits, now);
    return new Promise((resolve) => {
      if (this.#answers.push(() => resolve(values)) === 1) setImmediate(() => this.#answer());
    });
  }

  #answer() {
    const answers = this.#answers;
    this.#answers = [];
    for (const answer of answers) answer();
  }

  hitSync(hits: readonly CounterHit[], now: number): number[] {
    const window = windowOf(now);
    if (window !== this.#window) {
      // A new minute: every counter of the last one is dropped at once.
      this.#window = window;
      this.#counts = new Map();
    }
    return hits.map(({ name, by }) => {
      const value = (this.#counts.get(name) ?? 0) + by;
      if (by) this.#counts.set(name, value);
      return value;
    });
  }
}
