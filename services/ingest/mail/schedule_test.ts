import { describe, expect, it } from "vitest";
import { duePeriod, lastCompletePeriod, periodHolding, periodKey } from "./schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const day = (text: string) => Temporal.PlainDate.from(text);
const BERLIN = "Europe/Berlin";

describe("periodHolding", () => {
  it("is Monday to Sunday for a week and the calendar month for a month", () => {
    const week = periodHolding("week", day("2026-11-26"), BERLIN);
    expect(periodKey(week)).toBe("2026-11-23/2026-11-29");
    expect(iso(week.sendAt)).toBe("2026-11-30T08:00:00.000Z");
    const month = periodHolding("month", day("2026-02-14"), BERLIN);
    expect(periodKey(month)).toBe("2026-02-01/2026-02-28");
    expect(iso(month.sendAt)).toBe("2026-03-01T08:00:00.000Z");
    expect(periodKey(periodHolding("month", day("2028-02-29"), "UTC"))).toBe(
      "2028-02-01/2028-02-29",
    );
  });

  it("holds a Sunday in the week that began the Monday before", () => {
    expect(periodKey(periodHolding("week", day("2026-11-29"), BERLIN))).toBe(
      "2026-11-23/2026-11-29",
    );
    expect(periodKey(periodHolding("week", day("2026-11-30"), BERLIN))).toBe(
      "2026-11-30/2026-12-06",
    );
  });
});

describe("lastCompletePeriod", () => {
  it("is the period that ended before today began, local to the site", () => {
    // Monday 00:30 in Berlin, still Sunday in UTC.
    const now = at("2026-11-29T23:30:00Z");
    expect(periodKey(lastCompletePeriod("week", BERLIN, now))).toBe("2026-11-23/2026-11-29");
    expect(periodKey(lastCompletePeriod("week", "UTC", now))).toBe("2026-11-16/2026-11-22");
    expect(periodKey(lastCompletePeriod("month", BERLIN, at("2026-12-01T00:00:00Z")))).toBe(
      "2026-11-01/2026-11-30",
    );
    expect(periodKey(lastCompletePeriod("month", "UTC", at("2026-01-01T00:00:00Z")))).toBe(
      "2025-12-01/2025-12-31",
    );
  });
});

describe("duePeriod", () => {
  const long = at("2020-01-01T00:00:00Z");

  it("is the week before from Monday 09:00 local, the one before until then", () => {
    expect(
      periodKey(duePeriod("week", BERLIN, { nowMs: at("2026-11-30T07:59:59Z"), sinceMs: long })!),
    ).toBe("2026-11-16/2026-11-22");
    expect(
      periodKey(duePeriod("week", BERLIN, { nowMs: at("2026-11-30T08:00:00Z"), sinceMs: long })!),
    ).toBe("2026-11-23/2026-11-29");
  });

  it("keeps 09:00 local across the spring change (Berlin, 29 March 2026)", () => {
    // The week holding the change ends on it; its report is due at 09:00 CEST, 07:00 UTC.
    const week = duePeriod("week", BERLIN, { nowMs: at("2026-03-30T07:00:00Z"), sinceMs: long })!;
    expect(periodKey(week)).toBe("2026-03-23/2026-03-29");
    expect(iso(week.sendAt)).toBe("2026-03-30T07:00:00.000Z");
    // At 08:30 UTC on the Monday before, 09:30 CET: that week is due.
    expect(
      periodKey(duePeriod("week", BERLIN, { nowMs: at("2026-03-23T08:30:00Z"), sinceMs: long })!),
    ).toBe("2026-03-16/2026-03-22");
    expect(
      periodKey(duePeriod("week", BERLIN, { nowMs: at("2026-03-30T06:59:59Z"), sinceMs: long })!),
    ).toBe("2026-03-16/2026-03-22");
  });

  it("keeps 09:00 local across the autumn change, and for months (Berlin, 25 October 2026)", () => {
    const week = duePeriod("week", BERLIN, { nowMs: at("2026-10-26T08:00:00Z"), sinceMs: long })!;
    expect(periodKey(week)).toBe("2026-10-19/2026-10-25");
    expect(iso(week.sendAt)).toBe("2026-10-26T08:00:00.000Z");
    const october = duePeriod("month", BERLIN, {
      nowMs: at("2026-11-01T08:00:00Z"),
      sinceMs: long,
    })!;
    expect(periodKey(october)).toBe("2026-10-01/2026-10-31");
    // September's was due at 09:00 CEST: 07:00 UTC.
    expect(
      iso(duePeriod("month", BERLIN, { nowMs: at("2026-10-31T12:00:00Z"), sinceMs: long })!.sendAt),
    ).toBe("2026-10-01T07:00:00.000Z");
  });

  it("follows a zone west of UTC across its change (New York, 8 March 2026)", () => {
    const week = duePeriod("week", "America/New_York", {
      nowMs: at("2026-03-09T13:00:00Z"),
      sinceMs: long,
    })!;
    expect(periodKey(week)).toBe("2026-03-02/2026-03-08");
    expect(iso(week.sendAt)).toBe("2026-03-09T13:00:00.000Z");
  });

  it("waits for the next send time when the recipient came after this one", () => {
    const sendAt = at("2026-11-30T08:00:00Z");
    const now = at("2026-12-02T10:00:00Z");
    expect(duePeriod("week", BERLIN, { nowMs: now, sinceMs: sendAt + 1 })).toBeUndefined();
    expect(periodKey(duePeriod("week", BERLIN, { nowMs: now, sinceMs: sendAt })!)).toBe(
      "2026-11-23/2026-11-29",
    );
    // A week later the next one is due to that recipient.
    expect(
      periodKey(
        duePeriod("week", BERLIN, { nowMs: at("2026-12-07T08:00:00Z"), sinceMs: sendAt + 1 })!,
      ),
    ).toBe("2026-11-30/2026-12-06");
  });

  it("has a week of six days where the zone skipped one (Apia, 30 December 2011)", () => {
    const week = duePeriod("week", "Pacific/Apia", {
      nowMs: at("2012-01-02T09:00:00+14:00"),
      sinceMs: long - 1e12,
    })!;
    expect(periodKey(week)).toBe("2011-12-26/2012-01-01");
    expect(iso(week.sendAt)).toBe("2012-01-01T19:00:00.000Z");
  });
});
