import { describe, expect, it } from "vitest";
import { comparedRange, daysRange, localTimeText, resolveRange } from "./ranges.ts";

const day = (text: string) => Temporal.PlainDate.from(text);
const at = (iso: string) => Date.parse(iso);
const never = () => Promise.reject(new Error("not asked"));

describe("resolveRange", () => {
  it("takes the realtime ranges as the last minutes up to and including now", () => {
    const now = at("2026-03-29T00:10:00Z"); // 01:10 in Berlin, an hour before clocks go forward
    const range = resolveRange({ preset: "30m" }, "Europe/Berlin", now, never);
    expect(range).toMatchObject({
      startMs: now - 30 * 60_000,
      endMs: now + 1,
      realtime: true,
    });
    expect("firstDay" in range && range.firstDay.toString()).toBe("2026-03-29");
    // Five minutes after local midnight, 30 minutes reach back into yesterday.
    const early = resolveRange({ preset: "30m" }, "UTC", at("2026-03-29T00:05:00Z"), never);
    expect("firstDay" in early && [early.firstDay, early.lastDay].map(String)).toEqual([
      "2026-03-28",
      "2026-03-29",
    ]);
  });

  it("resolves day presets in the zone, and all from the first day with data", async () => {
    const now = at("2026-01-01T02:00:00Z");
    const seven = resolveRange({ preset: "7d" }, "Asia/Kathmandu", now, never);
    expect("firstDay" in seven && [seven.firstDay, seven.lastDay].map(String)).toEqual([
      "2025-12-26",
      "2026-01-01",
    ]);
    const all = await resolveRange(
      { preset: "all" },
      "UTC",
      now,
      () => Promise.resolve(at("2025-06-30T23:00:00Z")),
    );
    expect([all.firstDay, all.lastDay].map(String)).toEqual(["2025-06-30", "2026-01-01"]);
    const empty = await resolveRange(
      { preset: "all" },
      "UTC",
      now,
      () => Promise.resolve(undefined),
    );
    expect(empty.firstDay.toString()).toBe("2026-01-01");
  });
});

describe("comparedRange", () => {
  const zone = "Europe/Berlin";

  it("compares with as many days just before, a year earlier, or given days", () => {
    const range = daysRange(day("2026-03-01"), day("2026-03-10"), zone);
    const previous = comparedRange({ preset: "previous_period" }, range, zone);
    expect([previous.firstDay, previous.lastDay].map(String)).toEqual([
      "2026-02-19",
      "2026-02-28",
    ]);
    expect(previous.endMs).toBe(range.startMs);
    const earlier = comparedRange({ preset: "year_over_year" }, range, zone);
    expect([earlier.firstDay, earlier.lastDay].map(String)).toEqual(["2025-03-01", "2025-03-10"]);
    const given = comparedRange({ first: "2020-01-01", last: "2020-01-02" }, range, zone);
    expect(given.startMs).toBe(at("2019-12-31T23:00:00Z"));
  });

  it("makes 29 February 28 February a year earlier", () => {
    const range = daysRange(day("2024-02-29"), day("2024-03-01"), zone);
    const earlier = comparedRange({ preset: "year_over_year" }, range, zone);
    expect([earlier.firstDay, earlier.lastDay].map(String)).toEqual(["2023-02-28", "2023-03-01"]);
  });

  it("compares a realtime range with the same length of time before it", () => {
    const now = at("2026-11-26T11:00:00Z");
    const range = resolveRange({ preset: "5m" }, zone, now, never) as ReturnType<
      typeof daysRange
    >;
    const previous = comparedRange({ preset: "previous_period" }, range, zone);
    expect([previous.startMs, previous.endMs]).toEqual([range.startMs - 300_000, range.startMs]);
    expect(previous.realtime).toBe(true);
    const earlier = comparedRange({ preset: "year_over_year" }, range, zone);
    expect(localTimeText(earlier.startMs, zone)).toBe("2025-11-26T11:55:00+01:00");
  });
});
