/**
 * The rollups' builder of one ingest process: every ROLLUP_BUILD_MS one
 * round of buildAllRollups (the ended days and months of every site that
 * are not current), never two at once. Queries are exact without rollups,
 * only slower, so a failed round is logged and the next one tries again.
 *
 * How stale the rollups may be is the gauge `crm.ingest.rollups.staleness`:
 * the seconds since this process's builder last finished a round through
 * every site without an error, counted from the builder's start until the
 * first round finishes, so a builder that never finishes one is seen too.
 */
import type { Database } from "../../lib/db/mod.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { gaugeOverInstances } from "../../lib/telemetry.ts";
import { buildAllRollups } from "./rollups.ts";

/** How often the rollups of ended days and months, or stale ones, are built. */
export const ROLLUP_BUILD_MS = 60_000;

export class RollupBuilder {
  readonly #stop = new AbortController();
  readonly #startedAt: number;
  #lastSuccessAt: number | undefined;
  #building: Promise<void> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly options: { db: Database; clock: Clock; log: Logger; everyMs?: number },
  ) {
    this.#startedAt = options.clock.now();
    STALENESS.add(this);
  }

  start(): void {
    this.#timer ??= setInterval(() => this.round(), this.options.everyMs ?? ROLLUP_BUILD_MS);
  }

  /** One round now, unless one is running (which it then answers with). */
  round(): Promise<void> {
    const { db, clock, log } = this.options;
    this.#building ??= (async () => {
      const started = clock.now();
      try {
        await buildAllRollups(db, started, this.#stop.signal);
        if (!this.#stop.signal.aborted) this.#lastSuccessAt = started;
      } catch (error) {
        log.warn("rollups", { error: String(error) });
      } finally {
        this.#building = undefined;
      }
    })();
    return this.#building;
  }

  /** Seconds since the last round that went through every site (or since the start). */
  stalenessS(now: number): number {
    return Math.max(0, (now - (this.#lastSuccessAt ?? this.#startedAt)) / 1000);
  }

  /** Stops the timer and a round in progress (after its current statement). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    STALENESS.remove(this);
    this.#stop.abort();
    await this.#building;
  }

  get clock(): Clock {
    return this.options.clock;
  }
}

const STALENESS = gaugeOverInstances<RollupBuilder>("crm.ingest.rollups.staleness", {
  description: "Seconds since the rollups' builder last went through every site without an " +
    "error (since it started, before its first round)",
  unit: "s",
  value: (builder) => builder.stalenessS(builder.clock.now()),
  pick: "lowest",
});
