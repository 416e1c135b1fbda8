import { describe, expect, it } from "vitest";
import { parseQuery, QueryError } from "./query.ts";
import type { Json } from "../../lib/stats/wire.ts";

const base = { metrics: ["visitors"], date_range: "7d" };

function faultOf(body: Record<string, Json>): { field: string; problem: string } {
  try {
    parseQuery(body);
  } catch (error) {
    if (error instanceof QueryError) return { field: error.field, problem: error.problem };
    throw error;
  }
  throw new Error("the query was accepted");
}

describe("parseQuery", () => {
  it("fills in the defaults", () => {
    expect(parseQuery({ ...base, dimensions: ["visit:channel", "time:day"] })).toEqual({
      metrics: ["visitors"],
      dateRange: { preset: "7d" },
      dimensions: ["visit:channel", "time:day"],
      filters: [],
      orderBy: [{ by: "time:day", direction: "asc" }, { by: "visitors", direction: "desc" }],
      includeTotals: false,
      includeBots: false,
      includeTimeLabels: false,
      limit: 1000,
      offset: 0,
    });
  });

  it("reads every field", () => {
    const q = parseQuery({
      metrics: ["pageviews", "conversion_rate"],
      date_range: ["2026-03-01", "2026-03-31"],
      dimensions: ["event:page"],
      filters: [["is", "event:name", ["signup"]], ["contains_not", "visit:source", ["spam"]]],
      order_by: [["event:page", "asc"]],
      include: { totals: true, bots: true },
      limit: 10,
      offset: 20,
      time_zone: "asia/kathmandu",
    });
    expect(q.dateRange).toEqual({ first: "2026-03-01", last: "2026-03-31" });
    expect(q.filters[1]).toEqual({
      operator: "contains_not",
      dimension: "visit:source",
      values: ["spam"],
    });
    expect(q.orderBy).toEqual([{ by: "event:page", direction: "asc" }]);
    expect([q.includeTotals, q.includeBots, q.limit, q.offset]).toEqual([true, true, 10, 20]);
    expect(q.timeZone).toBe("Asia/Kathmandu");
  });

  it("names the field of each broken rule, with its path", () => {
    expect(faultOf({ date_range: "7d" })).toMatchObject({ field: "metrics" });
    expect(faultOf({ ...base, metrics: "visitors" }).field).toBe("metrics");
    expect(faultOf({ ...base, metrics: [] }).field).toBe("metrics");
    expect(faultOf({ ...base, metrics: ["visitors", "hits"] }).field).toBe("metrics[1]");
    expect(faultOf({ ...base, metrics: ["visitors", 3] }).field).toBe("metrics[1]");
    expect(faultOf({ ...base, metrics: ["visits", "visits"] }).problem).toMatch(/repeated/);
    expect(faultOf({ metrics: ["visits"] }).field).toBe("date_range");
    expect(faultOf({ ...base, date_range: "90d" }).field).toBe("date_range");
    expect(faultOf({ ...base, date_range: ["2026-02-30", "2026-03-01"] }).field).toBe(
      "date_range[0]",
    );
    expect(faultOf({ ...base, date_range: ["2026-03-01", "2026-3-2"] }).field).toBe(
      "date_range[1]",
    );
    expect(faultOf({ ...base, date_range: ["2026-03-02", "2026-03-01"] }).field).toBe(
      "date_range",
    );
    expect(faultOf({ ...base, date_range: ["2026-03-01"] }).field).toBe("date_range");
    expect(faultOf({ ...base, dimensions: "time:day" }).field).toBe("dimensions");
    expect(
      faultOf({ ...base, dimensions: ["time:day", "visit:os", "visit:device", "event:page"] })
        .field,
    ).toBe("dimensions");
    expect(faultOf({ ...base, dimensions: ["time:day", "time:year"] }).field).toBe(
      "dimensions[1]",
    );
    expect(faultOf({ ...base, dimensions: ["visit:os", "visit:os"] }).field).toBe(
      "dimensions[1]",
    );
    expect(faultOf({ ...base, filters: {} }).field).toBe("filters");
    expect(faultOf({ ...base, filters: [["is", "visit:os", ["Mac OS"]], ["is", "visit:os"]] }))
      .toMatchObject({ field: "filters[1]" });
    expect(faultOf({ ...base, filters: [["equals", "visit:os", ["x"]]] }).field).toBe(
      "filters[0]",
    );
    expect(faultOf({ ...base, filters: [["is", "visit:planet", ["x"]]] }).field).toBe(
      "filters[0]",
    );
    expect(faultOf({ ...base, filters: [["is", "visit:os", []]] }).field).toBe("filters[0]");
    expect(faultOf({ ...base, filters: [["is", "visit:os", [1]]] }).field).toBe("filters[0]");
    expect(faultOf({ ...base, filters: [["is", "visit:os", "x"]] }).field).toBe("filters[0]");
    expect(faultOf({ ...base, filters: [["is", "visit:os", ["a\u0000b"]]] }).field).toBe(
      "filters[0]",
    );
    expect(faultOf({ ...base, filters: [["is", "time:day", ["2026-01-01"]]] }).field).toBe(
      "filters[0]",
    );
    expect(faultOf({ ...base, order_by: [["pageviews", "desc"]] }).field).toBe("order_by[0]");
    expect(faultOf({ ...base, order_by: [["visitors", "up"]] }).field).toBe("order_by[0]");
    expect(faultOf({ ...base, order_by: "visitors" }).field).toBe("order_by");
    expect(faultOf({ ...base, include: true }).field).toBe("include");
    expect(faultOf({ ...base, include: { totals: "yes" } }).field).toBe("include.totals");
    expect(faultOf({ ...base, include: { bots: 1 } }).field).toBe("include.bots");
    expect(faultOf({ ...base, limit: 0 }).field).toBe("limit");
    expect(faultOf({ ...base, limit: 10_001 }).field).toBe("limit");
    expect(faultOf({ ...base, limit: 2.5 }).field).toBe("limit");
    expect(faultOf({ ...base, limit: "10" }).field).toBe("limit");
    expect(faultOf({ ...base, offset: -1 }).field).toBe("offset");
    expect(faultOf({ ...base, time_zone: "Mars/Olympus" }).field).toBe("time_zone");
    expect(faultOf({ ...base, time_zone: "+02:00" }).field).toBe("time_zone");
  });

  it("asks for an event:name filter with conversion_rate", () => {
    expect(faultOf({ ...base, metrics: ["visitors", "conversion_rate"] })).toMatchObject({
      field: "metrics[1]",
      problem: expect.stringMatching(/event:name filter/),
    });
    expect(
      faultOf({
        ...base,
        metrics: ["conversion_rate"],
        filters: [["is", "event:page", ["/thanks"]]],
      }).field,
    ).toBe("metrics[0]");
  });

  it("reports the first fault in the contract's field order", () => {
    expect(faultOf({ metrics: ["hits"], date_range: "never", limit: 0 }).field).toBe("metrics[0]");
    expect(faultOf({ ...base, limit: 0, dimensions: ["x"] }).field).toBe("dimensions[0]");
    expect(faultOf({ ...base, time_zone: "x", offset: -5 }).field).toBe("offset");
  });

  const site = { paramKeys: new Set(["plan", "seats"]) };
  const faultFor = (body: Record<string, Json>) => {
    try {
      parseQuery(body, site);
    } catch (error) {
      if (error instanceof QueryError) return { field: error.field, problem: error.problem };
      throw error;
    }
    throw new Error("the query was accepted");
  };

  it("reads the realtime ranges, and time:minute only over one day at most", () => {
    for (const range of ["30m", "5m", "today", "yesterday", ["2026-03-01", "2026-03-01"]]) {
      const q = parseQuery({ ...base, date_range: range, dimensions: ["time:minute"] });
      expect(q.dimensions).toEqual(["time:minute"]);
    }
    for (const range of ["7d", "30d", "month", "year", "all", ["2026-03-01", "2026-03-02"]]) {
      expect(faultOf({ ...base, date_range: range, dimensions: ["time:minute"] })).toMatchObject({
        field: "dimensions",
        problem: expect.stringMatching(/at most one day/),
      });
    }
    expect(parseQuery({ ...base, date_range: "30m" }).dateRange).toEqual({ preset: "30m" });
    expect(faultOf({ ...base, date_range: "15m" }).field).toBe("date_range");
  });

  it("takes the new visit dimensions and event:props of a declared parameter", () => {
    const q = parseQuery({
      ...base,
      dimensions: ["visit:exit_page", "visit:screen", "event:props:plan"],
      filters: [["is", "visit:referrer", ["https://a.example/"]], [
        "contains",
        "event:props:seats",
        ["1"],
      ]],
      order_by: [["event:props:plan", "asc"]],
    }, site);
    expect(q.dimensions).toEqual(["visit:exit_page", "visit:screen", "event:props:plan"]);
    expect(q.filters.map((f) => f.dimension)).toEqual(["visit:referrer", "event:props:seats"]);
    expect(q.orderBy).toEqual([{ by: "event:props:plan", direction: "asc" }]);
    expect(faultFor({ ...base, dimensions: ["event:props:colour"] })).toMatchObject({
      field: "dimensions[0]",
      problem: expect.stringMatching(/"colour" is not a parameter declared/),
    });
    expect(faultFor({ ...base, filters: [["is", "event:props:x", ["1"]]] }).field).toBe(
      "filters[0]",
    );
    expect(faultFor({ ...base, dimensions: ["event:props:"] }).field).toBe("dimensions[0]");
    // Without declared parameters no key is known.
    expect(faultOf({ ...base, dimensions: ["event:props:plan"] }).field).toBe("dimensions[0]");
  });

  it("reads include.compare and include.time_labels, refusing any other member", () => {
    const q = parseQuery({
      ...base,
      dimensions: ["time:day"],
      include: { compare: "previous_period", time_labels: true },
    });
    expect([q.compare, q.includeTimeLabels]).toEqual([{ preset: "previous_period" }, true]);
    expect(parseQuery({ ...base, include: { compare: "year_over_year" } }).compare).toEqual({
      preset: "year_over_year",
    });
    expect(parseQuery({ ...base, include: { compare: ["2025-01-01", "2025-01-07"] } }).compare)
      .toEqual({ first: "2025-01-01", last: "2025-01-07" });
    expect(parseQuery({ ...base, date_range: "30m", include: { compare: "previous_period" } }))
      .toMatchObject({ compare: { preset: "previous_period" } });
    expect(faultOf({ ...base, include: { colour: true } })).toMatchObject({
      field: "include",
      problem: expect.stringMatching(/unknown member "colour"/),
    });
    expect(faultOf({ ...base, date_range: "all", include: { compare: "previous_period" } }))
      .toMatchObject({ field: "include" });
    expect(faultOf({ ...base, include: { time_labels: true } })).toMatchObject({
      field: "include",
      problem: expect.stringMatching(/time dimension/),
    });
    expect(faultOf({ ...base, include: { time_labels: "yes" } }).field).toBe(
      "include.time_labels",
    );
    expect(faultOf({ ...base, include: { compare: "last_year" } }).field).toBe("include.compare");
    expect(faultOf({ ...base, include: { compare: ["2025-01-02", "2025-01-01"] } }).field).toBe(
      "include.compare",
    );
    expect(faultOf({ ...base, include: { compare: ["2025-02-30", "2025-03-01"] } }).field).toBe(
      "include.compare[0]",
    );
    expect(faultOf({ ...base, include: { compare: 7 } }).field).toBe("include.compare");
  });

  it("takes null as absent for the optional fields", () => {
    const q = parseQuery({
      ...base,
      dimensions: null,
      filters: null,
      order_by: null,
      include: null,
      limit: null,
      offset: null,
      time_zone: null,
    });
    expect([q.dimensions, q.filters, q.limit, q.offset, q.timeZone]).toEqual([
      [],
      [],
      1000,
      0,
      undefined,
    ]);
  });
});
