/**
 * Fixed one-minute windows: a counter belongs to the minute it was counted
 * in and starts again at zero when the next minute begins.
 */

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

/** Counters in this process; exact for a single gateway replica. */
export class LocalCounter implements WindowCounter {
  #window = -1;
  #counts = new Map<string, number>();

  hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    return Promise.resolve(this.hitSync(hits, now));
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
