import { describe, expect, it } from "vitest";
import { nextAttemptAt, nominalWaitMs, RETRY, retryWaitMs } from "./schedule.ts";

const HOUR = 3_600_000;

/** Every attempt's time from the first (0) until the schedule gives up, the jitter drawn by random. */
function attempts(random: () => number): number[] {
  const times = [0];
  for (let n = 1;; n++) {
    const next = nextAttemptAt({ attempt: n, now: times[n - 1], firstAttemptAt: 0 }, random);
    if (next === null) return times;
    times.push(next);
  }
}

describe("the retry schedule", () => {
  it("retries first within 4 s, a quarter less at most", () => {
    expect(retryWaitMs(1, () => 0)).toBe(4_000);
    expect(retryWaitMs(1, () => 0.999999)).toBe(3_000);
    for (let i = 0; i < 100; i++) {
      const wait = retryWaitMs(1);
      expect(wait).toBeGreaterThanOrEqual(3_000);
      expect(wait).toBeLessThanOrEqual(4_000);
    }
  });

  it("waits four times longer each time, up to 8 hours", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(nominalWaitMs)).toEqual([
      4_000,
      16_000,
      64_000,
      256_000,
      1_024_000,
      4_096_000,
      16_384_000,
      8 * HOUR,
      8 * HOUR,
    ]);
  });

  it("keeps trying for at least 24 hours whatever the jitter, and then gives up", () => {
    for (const random of [() => 0, () => 0.999999, () => 0.5]) {
      const times = attempts(random);
      const last = times[times.length - 1];
      expect(last).toBeGreaterThanOrEqual(RETRY.retryForMs);
      // The attempt before the last was still inside the 24 hours.
      expect(times[times.length - 2]).toBeLessThan(RETRY.retryForMs);
      expect(last).toBeLessThan(RETRY.retryForMs + 8 * HOUR);
      expect(times.length).toBeGreaterThanOrEqual(11);
      expect(times.length).toBeLessThanOrEqual(13);
    }
  });

  it("gives up only once the first attempt is 24 hours old", () => {
    expect(nextAttemptAt({ attempt: 3, now: RETRY.retryForMs - 1, firstAttemptAt: 0 }, () => 0))
      .toBe(RETRY.retryForMs - 1 + 64_000);
    expect(nextAttemptAt({ attempt: 3, now: RETRY.retryForMs, firstAttemptAt: 0 })).toBeNull();
  });
});
