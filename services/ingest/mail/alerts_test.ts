import { describe, expect, it } from "vitest";
import { alertData, fires, oldEnough, QUIET_MS, windowOf } from "./alerts.ts";

const now = Date.parse("2026-11-29T12:00:00Z");
const HOUR = 3600_000;

describe("fires", () => {
  it("fires a spike when the visitors reach the threshold, a drop when they are below it", () => {
    const spike = { kind: "spike" as const, threshold: 50, firedAt: null };
    expect([fires(spike, 49, now), fires(spike, 50, now), fires(spike, 90, now)]).toEqual([
      false,
      true,
      true,
    ]);
    const drop = { kind: "drop" as const, threshold: 5, firedAt: null };
    expect([fires(drop, 4, now), fires(drop, 5, now), fires(drop, 0, now)]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it("fires at most once per 12 hours", () => {
    const spike = (firedAt: number) => ({ kind: "spike" as const, threshold: 1, firedAt });
    expect(fires(spike(now - QUIET_MS + 1), 100, now)).toBe(false);
    expect(fires(spike(now - QUIET_MS), 100, now)).toBe(true);
    expect(QUIET_MS).toBe(12 * HOUR);
  });
});

describe("windows", () => {
  it("count the last 30 minutes or 12 hours up to now, as the realtime ranges do", () => {
    expect(windowOf("spike", now)).toEqual({ startMs: now - 30 * 60_000, endMs: now + 1 });
    expect(windowOf("drop", now)).toEqual({ startMs: now - 12 * HOUR, endMs: now + 1 });
  });

  it("keep drop alerts quiet until the site is 12 hours old", () => {
    expect(oldEnough(now - 12 * HOUR + 1, now)).toBe(false);
    expect(oldEnough(now - 12 * HOUR, now)).toBe(true);
    expect(oldEnough(null, now)).toBe(true);
  });

  it("give the webhook's data as the contract lists it", () => {
    expect(JSON.parse(alertData({ siteId: "demo", kind: "drop", visitors: 2, threshold: 5 })))
      .toEqual({ siteId: "demo", kind: "drop", visitors: 2, threshold: 5, window: 720 });
  });
});
