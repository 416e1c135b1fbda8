/**
 * The one source of the current time for everything that decides by it: the
 * rate-limit minute windows, key and cache expiry, scheduled posts, the time
 * stamped on stored rows, retention. A platform carries one clock, and every
 * service and the gateway read it from there, so a test moves time forward
 * instead of waiting for it.
 */
export interface Clock {
  /** Unix time in milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stands still until it is moved: for tests. */
export class ManualClock implements Clock {
  #now: number;

  constructor(startMs: number = Date.now()) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    if (ms < 0) throw new RangeError("a clock only moves forward");
    this.#now += ms;
  }

  /** Moves to a later time. */
  set(ms: number): void {
    this.advance(ms - this.#now);
  }
}
