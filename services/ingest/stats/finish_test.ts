import { describe, expect, it } from "vitest";
import { finish, metricValue, roundHalfUp } from "./finish.ts";
import { emptySums, type Group, type Sums } from "./plan.ts";
import { parseQuery } from "./query.ts";

const sums = (s: Partial<Sums>): Sums => ({ ...emptySums(), ...s });

describe("metric values", () => {
  it("rounds half up", () => {
    expect(roundHalfUp(5, 2)).toBe(3);
    expect(roundHalfUp(4, 3)).toBe(1);
    expect(roundHalfUp(5, 3)).toBe(2);
    expect(roundHalfUp(0, 7)).toBe(0);
    expect(roundHalfUp(2 ** 60, 2)).toBe(2 ** 59);
  });

  it("computes the rates from the sums, 0 without visits or visitors", () => {
    const s = sums({
      visits: 3,
      bounces: 1,
      durationMs: 100_500,
      visitPageviews: 5,
      reached: 6,
      converted: 1,
    });
    expect(metricValue("bounce_rate", s)).toBe(33.3);
    expect(metricValue("visit_duration", s)).toBe(34); // 33.5 s rounds up
    expect(metricValue("views_per_visit", s)).toBe(1.67);
    expect(metricValue("conversion_rate", s)).toBe(16.7);
    const none = sums({});
    for (
      const m of ["bounce_rate", "visit_duration", "views_per_visit", "conversion_rate"] as const
    ) {
      expect(metricValue(m, none)).toBe(0);
    }
    expect(metricValue("bounce_rate", sums({ visits: 8, bounces: 1 }))).toBe(12.5);
    expect(metricValue("bounce_rate", sums({ visits: 16, bounces: 1 }))).toBe(6.3);
  });
});

describe("finish", () => {
  const group = (dims: (string | null)[], s: Partial<Sums>): Group => ({ dims, sums: sums(s) });

  it("answers one row of zeros without dimensions and no data", () => {
    const q = parseQuery({ metrics: ["visitors", "revenue", "bounce_rate"], date_range: "7d" });
    expect(finish(q, { groups: [], all: emptySums() })).toEqual({
      rows: [{ dims: [], metrics: [0, new Map(), 0] }],
      allRows: [{ dims: [], metrics: [0, new Map(), 0] }],
      totals: undefined,
      totalRows: 1,
    });
  });

  it("orders by time ascending, then the first metric descending, then the dimensions", () => {
    const q = parseQuery({
      metrics: ["visitors"],
      date_range: "7d",
      dimensions: ["visit:channel", "time:hour"],
    });
    const groups = [
      group(["direct", "2026-10-25T02:00:00+01:00"], { visitors: 5 }),
      group(["paid", "2026-10-25T02:00:00+02:00"], { visitors: 1 }),
      group([null, "2026-10-25T02:00:00+02:00"], { visitors: 3 }),
      group(["email", "2026-10-25T02:00:00+02:00"], { visitors: 3 }),
    ];
    const answer = finish(q, { groups, all: emptySums() });
    expect(answer.rows.map((r) => r.dims)).toEqual([
      ["email", "2026-10-25T02:00:00+02:00"],
      [null, "2026-10-25T02:00:00+02:00"],
      ["paid", "2026-10-25T02:00:00+02:00"],
      ["direct", "2026-10-25T02:00:00+01:00"],
    ]);
  });

  it("orders as asked, pages with limit and offset, counts rows before paging, adds totals", () => {
    const q = parseQuery({
      metrics: ["pageviews", "revenue"],
      date_range: "7d",
      dimensions: ["event:page"],
      order_by: [["revenue", "desc"], ["event:page", "desc"]],
      include: { totals: true },
      limit: 2,
      offset: 1,
    });
    const groups = [
      group(["/a"], { pageviews: 1, revenue: new Map([["EUR", 5n]]) }),
      group(["/b"], { pageviews: 2, revenue: new Map([["EUR", 5n], ["USD", 1n]]) }),
      group(["/c"], { pageviews: 3, revenue: new Map([["USD", 900n]]) }),
      group(["/d"], { pageviews: 4, revenue: new Map([["EUR", 5n]]) }),
    ];
    const answer = finish(q, { groups, all: sums({ pageviews: 10 }) });
    // By EUR, then USD: /b (5, 1), then /d and /a (5, 0) by page descending, then /c (0, 900).
    expect(answer.rows.map((r) => r.dims[0])).toEqual(["/d", "/a"]);
    expect(answer.totalRows).toBe(4);
    expect(answer.totals).toEqual([10, new Map()]);
  });
});
