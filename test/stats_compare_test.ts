/**
 * include.compare and include.time_labels of POST /stats/v1/query, on every
 * storage, on a data set whose every answer was computed by hand.
 *
 * Site "cmp", zone Europe/Berlin (UTC+1 in these days; times below UTC):
 *   the range 2026-03-02 to 2026-03-04:
 *     03-02 09:00 view (vX, sX1, from google: organic)  09:01 view  09:02 purchase 2000 USD
 *     03-02 10:00 view (vY, sY1, direct)                         → a bounce
 *     03-03 09:00 view (vX, sX2, direct)                         → a bounce
 *     03-04 09:00 view (vY, sY2, direct)                         → a bounce
 *   the previous period, 2026-02-27 to 2026-03-01:
 *     02-27 09:00 view (vZ, sZ1, from google: organic)           → a bounce
 *     03-01 09:00 view (vZ, sZ2, direct)  09:01 purchase 1000 USD  09:02 signup 500 EUR
 *     03-01 10:00 view (vW, sW1, direct)                         → a bounce
 * The range: 2 visitors, 5 page views, 4 visits with 3 bounces (75.0), USD 2000, 1 event.
 * The previous period: 2 visitors, 3 page views, 3 visits with 2 bounces (66.7), USD 1000 and
 * EUR 500, 2 events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { reportKeyOf, statsQuery, statsSite, storeRows } from "./helpers/stats.ts";

const SITE = "cmp";
const RANGE = ["2026-03-02", "2026-03-04"];
const page = (path: string) => `https://cmp.example${path}`;
const GOOGLE = "https://www.google.com/";

const ROWS = [
  {
    at: "2026-03-02T09:00:00Z",
    kind: "view" as const,
    body: { u: page("/a"), v: "vX", s: "sX1", r: GOOGLE },
  },
  { at: "2026-03-02T09:01:00Z", kind: "view" as const, body: { u: page("/b"), v: "vX", s: "sX1" } },
  {
    at: "2026-03-02T09:02:00Z",
    kind: "event" as const,
    body: { n: "purchase", val: 2000, v: "vX", s: "sX1" },
  },
  { at: "2026-03-02T10:00:00Z", kind: "view" as const, body: { u: page("/a"), v: "vY", s: "sY1" } },
  { at: "2026-03-03T09:00:00Z", kind: "view" as const, body: { u: page("/a"), v: "vX", s: "sX2" } },
  { at: "2026-03-04T09:00:00Z", kind: "view" as const, body: { u: page("/a"), v: "vY", s: "sY2" } },
  {
    at: "2026-02-27T09:00:00Z",
    kind: "view" as const,
    body: { u: page("/a"), v: "vZ", s: "sZ1", r: GOOGLE },
  },
  { at: "2026-03-01T09:00:00Z", kind: "view" as const, body: { u: page("/a"), v: "vZ", s: "sZ2" } },
  {
    at: "2026-03-01T09:01:00Z",
    kind: "event" as const,
    body: { n: "purchase", val: 1000, v: "vZ", s: "sZ2" },
  },
  {
    at: "2026-03-01T09:02:00Z",
    kind: "event" as const,
    body: { n: "signup", val: 500, v: "vZ", s: "sZ2" },
  },
  { at: "2026-03-01T10:00:00Z", kind: "view" as const, body: { u: page("/a"), v: "vW", s: "sW1" } },
];

describe.each(SYSTEM_STORAGES)("comparisons and time labels, %s", (storage) => {
  let sys: TestSystem;
  const query = async (body: Record<string, unknown>) => {
    const answer = await statsQuery(sys, { date_range: RANGE, ...body }, reportKeyOf(SITE));
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    return answer.body;
  };

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await statsSite(SITE, "Europe/Berlin") });
    await storeRows(sys, SITE, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("compares each row with the previous period's, time by position", async () => {
    const answer = await query({
      metrics: ["visitors", "pageviews", "bounce_rate"],
      dimensions: ["time:day", "visit:channel"],
      include: { compare: "previous_period", totals: true, time_labels: true },
    });
    expect(answer.results).toEqual([
      {
        dimensions: ["2026-03-02", "direct"],
        metrics: [1, 1, 100],
        comparison: {
          dimensions: ["2026-02-27", "direct"],
          metrics: [0, 0, 0],
          change: [null, null, 100],
        },
      },
      {
        dimensions: ["2026-03-02", "organic"],
        metrics: [1, 2, 0],
        comparison: {
          dimensions: ["2026-02-27", "organic"],
          metrics: [1, 1, 100],
          change: [0, 100, -100],
        },
      },
      {
        dimensions: ["2026-03-03", "direct"],
        metrics: [1, 1, 100],
        comparison: {
          dimensions: ["2026-02-28", "direct"],
          metrics: [0, 0, 0],
          change: [null, null, 100],
        },
      },
      {
        dimensions: ["2026-03-04", "direct"],
        metrics: [1, 1, 100],
        comparison: {
          dimensions: ["2026-03-01", "direct"],
          metrics: [2, 2, 50],
          change: [-50, -50, 50],
        },
      },
    ]);
    expect(answer.totals).toEqual([2, 5, 75]);
    expect(answer.totalsComparison).toEqual({
      dimensions: [],
      metrics: [2, 3, 66.7],
      change: [0, 66.7, 8.3],
    });
    expect(answer.meta).toMatchObject({
      dateRange: RANGE,
      compareDateRange: ["2026-02-27", "2026-03-01"],
      timeLabels: ["2026-03-02", "2026-03-03", "2026-03-04"],
    });
    expect(answer.query.include).toMatchObject({ compare: "previous_period", time_labels: true });
  });

  it("compares revenue per currency of either side", async () => {
    const answer = await query({
      metrics: ["revenue", "events"],
      include: { compare: "previous_period" },
    });
    expect(answer.results).toEqual([{
      dimensions: [],
      metrics: [{ USD: 2000 }, 1],
      comparison: {
        dimensions: [],
        metrics: [{ EUR: 500, USD: 1000 }, 2],
        change: [{ EUR: -100, USD: 100 }, -50],
      },
    }]);
  });

  it("leaves comparison null where the compared range has no bucket", async () => {
    const answer = await query({
      metrics: ["pageviews"],
      dimensions: ["time:day"],
      include: { compare: ["2026-02-27", "2026-02-28"] },
    });
    expect(answer.results).toEqual([
      {
        dimensions: ["2026-03-02"],
        metrics: [3],
        comparison: { dimensions: ["2026-02-27"], metrics: [1], change: [200] },
      },
      {
        dimensions: ["2026-03-03"],
        metrics: [1],
        comparison: { dimensions: ["2026-02-28"], metrics: [0], change: [null] },
      },
      { dimensions: ["2026-03-04"], metrics: [1], comparison: null },
    ]);
    expect(answer.meta.compareDateRange).toEqual(["2026-02-27", "2026-02-28"]);
  });

  it("does not list rows with data only in the compared range", async () => {
    const answer = await query({
      metrics: ["events"],
      dimensions: ["event:name"],
      include: { compare: "previous_period" },
    });
    expect(answer.results).toEqual([
      {
        dimensions: ["purchase"],
        metrics: [1],
        comparison: { dimensions: ["purchase"], metrics: [1], change: [0] },
      },
      {
        dimensions: [null],
        metrics: [0],
        comparison: { dimensions: [null], metrics: [0], change: [null] },
      },
    ]);
  });

  it("compares with the same dates a year earlier", async () => {
    const answer = await query({
      metrics: ["visitors"],
      include: { compare: "year_over_year" },
    });
    expect(answer.meta.compareDateRange).toEqual(["2025-03-02", "2025-03-04"]);
    expect(answer.results[0].comparison).toEqual({
      dimensions: [],
      metrics: [0],
      change: [null],
    });
  });

  it("lists every label of the range, with or without data", async () => {
    const hours = await query({
      metrics: ["pageviews"],
      dimensions: ["time:hour"],
      date_range: ["2026-10-25", "2026-10-25"],
      include: { time_labels: true },
    });
    expect(hours.results).toEqual([]);
    expect(hours.meta.timeLabels).toHaveLength(25);
    expect(hours.meta.timeLabels.slice(1, 5)).toEqual([
      "2026-10-25T01:00:00+02:00",
      "2026-10-25T02:00:00+02:00",
      "2026-10-25T02:00:00+01:00",
      "2026-10-25T03:00:00+01:00",
    ]);
    const spring = await query({
      metrics: ["pageviews"],
      dimensions: ["time:hour"],
      date_range: ["2026-03-29", "2026-03-29"],
      include: { time_labels: true },
    });
    expect(spring.meta.timeLabels).toHaveLength(23);
    const weeks = await query({
      metrics: ["pageviews"],
      dimensions: ["visit:channel", "time:week"],
      date_range: ["2026-02-25", "2026-03-10"],
      include: { time_labels: true },
    });
    expect(weeks.meta.timeLabels).toEqual(["2026-02-23", "2026-03-02", "2026-03-09"]);
  });

  it("refuses what include cannot hold", async () => {
    for (
      const include of [
        { colour: true },
        { time_labels: true },
        { totals: true, compare: "previous_period", extra: 1 },
      ]
    ) {
      const answer = await statsQuery(sys, {
        metrics: ["visitors"],
        date_range: RANGE,
        include,
      }, reportKeyOf(SITE));
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ message: "invalid_query", field: "include" });
    }
    const all = await statsQuery(sys, {
      metrics: ["visitors"],
      date_range: "all",
      include: { compare: "previous_period" },
    }, reportKeyOf(SITE));
    expect(all.status).toBe(400);
    expect(all.body).toMatchObject({ message: "invalid_query", field: "include" });
  });
});
