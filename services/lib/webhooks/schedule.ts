/**
 * When a failed delivery is tried again: exponential backoff with jitter.
 * The wait after failed attempt n is 4 s × 4^(n−1), at most 8 hours, less
 * up to a quarter at random (so a receiver that came back is not hit by every
 * waiting message in the same second); so the first retry comes 3 to 4 s
 * after the first failure, within the contract's 5 s with the worker's
 * pacing. A delivery is retried while its first attempt is less than 24 hours
 * old, so every message is tried for at least 24 hours (about 12 attempts),
 * whatever the jitter drew.
 */
const SECOND = 1000;
const HOUR = 3600 * SECOND;

export const RETRY = {
  firstWaitMs: 4 * SECOND,
  factor: 4,
  maxWaitMs: 8 * HOUR,
  /** The share of a wait that jitter may take off. */
  jitter: 0.25,
  /** Retried while the first attempt is younger than this. */
  retryForMs: 24 * HOUR,
} as const;

/** The wait after failed attempt n (1, 2, ...) before jitter. */
export function nominalWaitMs(failedAttempt: number): number {
  return Math.min(RETRY.maxWaitMs, RETRY.firstWaitMs * RETRY.factor ** (failedAttempt - 1));
}

/** The wait after failed attempt n, with `random()` in [0, 1) drawing the jitter. */
export function retryWaitMs(failedAttempt: number, random: () => number = Math.random): number {
  return Math.round(nominalWaitMs(failedAttempt) * (1 - RETRY.jitter * random()));
}

/**
 * When to try again after a failed attempt made at `now`, or null to give
 * up: the delivery's first attempt was 24 hours or more ago.
 */
export function nextAttemptAt(
  failure: { attempt: number; now: number; firstAttemptAt: number },
  random: () => number = Math.random,
): number | null {
  if (failure.now - failure.firstAttemptAt >= RETRY.retryForMs) return null;
  return failure.now + retryWaitMs(failure.attempt, random);
}
