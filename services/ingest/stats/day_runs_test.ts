import { describe, expect, it } from "vitest";
import { bucketsOf } from "./calendar.ts";
import { DAY_MS, type Span, splitByDays } from "./day_runs.ts";

const at = (s: string) => Date.parse(s);
const spans = (list: Span[]) =>
  list.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()]);

/** Every day run is whole UTC days; days and quarters tile [from, to) without overlap. */
function expectTiles(from: number, to: number, split: ReturnType<typeof splitByDays>) {
  for (const [a, b] of split.days) {
    expect(a % DAY_MS).toBe(0);
    expect(b % DAY_MS).toBe(0);
    expect(b).toBeGreaterThan(a);
  }
  const all = [...split.days, ...split.quarters].sort((x, y) => x[0] - y[0]);
  let covered = from;
  for (const [a, b] of all) {
    expect(a).toBe(covered);
    expect(b).toBeGreaterThan(a);
    covered = b;
  }
  expect(covered).toBe(to);
}

describe("splitByDays", () => {
  it("reads a UTC range without time dimension as one run of days", () => {
    const from = at("2026-01-01T00:00:00Z");
    const to = at("2026-02-01T00:00:00Z");
    const split = splitByDays(from, to, []);
    expect(spans(split.days)).toEqual([["2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"]]);
    expect(split.quarters).toEqual([]);
  });

  it("reads the days a zone's local midnights cut by the quarter hour", () => {
    // October 2026 in Kathmandu (+05:45): from 2026-09-30T18:15Z to 2026-10-31T18:15Z.
    const from = at("2026-09-30T18:15:00Z");
    const to = at("2026-10-31T18:15:00Z");
    const split = splitByDays(from, to, []);
    expect(spans(split.days)).toEqual([["2026-10-01T00:00:00.000Z", "2026-10-31T00:00:00.000Z"]]);
    expect(spans(split.quarters)).toEqual([
      ["2026-09-30T18:15:00.000Z", "2026-10-01T00:00:00.000Z"],
      ["2026-10-31T00:00:00.000Z", "2026-10-31T18:15:00.000Z"],
    ]);
    expectTiles(from, to, split);
  });

  it("keeps every day inside one bucket of each time dimension", () => {
    const zone = "America/New_York";
    const from = at("2026-01-01T05:00:00Z");
    const to = at("2027-01-01T05:00:00Z");
    const months = bucketsOf("month", zone, from, to).starts;
    const weeks = bucketsOf("week", zone, from, to).starts;
    const split = splitByDays(from, to, [months, weeks]);
    expectTiles(from, to, split);
    const cuts = [...months, ...weeks];
    for (const [a, b] of split.days) {
      for (const c of cuts) expect(c <= a || c >= b).toBe(true);
    }
    // A New York local midnight is never a UTC midnight: each cut leaves its day to the quarter
    // hours, and the rest of the year is read by the day.
    const wholeDays = split.days.reduce((n, [a, b]) => n + (b - a) / DAY_MS, 0);
    expect(wholeDays).toBe(365 - new Set(cuts).size);
  });

  it("finds no whole day inside a local day of a zone off UTC", () => {
    const zone = "Asia/Kathmandu";
    const from = at("2026-09-30T18:15:00Z");
    const to = at("2026-10-31T18:15:00Z");
    const split = splitByDays(from, to, [bucketsOf("day", zone, from, to).starts]);
    expect(split.days).toEqual([]);
    expect(split.quarters).toEqual([[from, to]]);
  });

  it("reads a UTC day by day when the query is by UTC day, but not by hour", () => {
    const from = at("2026-03-01T00:00:00Z");
    const to = at("2026-03-08T00:00:00Z");
    expect(spans(splitByDays(from, to, [bucketsOf("day", "UTC", from, to).starts]).days))
      .toEqual([["2026-03-01T00:00:00.000Z", "2026-03-08T00:00:00.000Z"]]);
    expect(splitByDays(from, to, [bucketsOf("hour", "UTC", from, to).starts]).days).toEqual([]);
  });

  it("reads by the quarter hour before a dimension's first bucket", () => {
    const from = at("2026-03-01T00:00:00Z");
    const to = at("2026-03-31T00:00:00Z");
    // Data begins on 2026-03-10: the first bucket starts there and takes in the days before it.
    const split = splitByDays(from, to, [[at("2026-03-10T00:00:00Z"), at("2026-03-20T00:00:00Z")]]);
    expect(spans(split.days)).toEqual([["2026-03-10T00:00:00.000Z", "2026-03-31T00:00:00.000Z"]]);
    expect(spans(split.quarters)).toEqual([[
      "2026-03-01T00:00:00.000Z",
      "2026-03-10T00:00:00.000Z",
    ]]);
  });

  it("leaves a range shorter than a day to the quarter hours", () => {
    const from = at("2026-03-01T06:00:00Z");
    const to = at("2026-03-02T05:45:00Z");
    expect(splitByDays(from, to, [])).toEqual({ days: [], quarters: [[from, to]] });
  });
});
