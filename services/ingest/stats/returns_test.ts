/**
 * Queries without dimensions (the dashboard's summaries), the totals of
 * queries by day, week or month, and breakdowns by one visit attribute, from
 * the period sums and the visitors by previous day, against the stored rows,
 * on both storages: in four zones, before anything is built (everything from
 * the slices), once built (the sums and visitors by previous day read, which
 * a changed count shows), after late rows make days stale, and through
 * visitor deletion, retention and the rebuild. Also the builder's own rules:
 * it builds ended UTC days in order, and never a day whose previous day is
 * stale.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import type { Database } from "../../lib/db/mod.ts";
import { Partitions } from "../partitions.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { rebuildSite } from "./derived.ts";
import { buildPeriodSums, coverOf } from "./periods.ts";
import { buildDayRange, buildVisitorDays } from "./returns.ts";
import { VISIT_ATTRIBUTES } from "./plan.ts";
import type { Json } from "../../lib/stats/wire.ts";
import {
  answersOf as answersFor,
  busiestVisitor,
  databaseWithTraffic,
  lateTraffic,
  siteRows,
  TEST_ZONES,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
  writeLastRowFirst,
} from "./test_traffic.ts";

const SITE = "returns";
const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-11-20T00:00:00Z");
/** The UTC days from the traffic's first up to NOW (all ended, all built). */
const DAYS_TO_NOW = (NOW - TRAFFIC_FROM) / DAY_MS;

const QUERIES: Record<string, Json>[] = [
  { metrics: ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"] },
  { metrics: ["visitors"] },
  { metrics: ["views_per_visit", "events", "leads", "visitors"] },
  // The channels' visitors from their visitors by previous day.
  { metrics: ["visitors", "visits", "pageviews", "bounce_rate"], dimensions: ["visit:channel"] },
  // Other visit attributes' values, as channels (the build keeps every attribute alike).
  ...["source", "visitor_type"].map((a) => ({
    metrics: ["visitors", "visits", "visit_duration"],
    dimensions: [`visit:${a}`],
  })),
  // Revenue alone: every value with visits is a group, with or without revenue.
  { metrics: ["revenue"], dimensions: ["visit:device"] },
];
/** Queries with dimensions asked for their totals, whose visitors are counted the same way. */
const WITH_TOTALS: Record<string, Json>[] = [
  TRAFFIC_QUERY,
  { metrics: ["visitors", "visits", "pageviews"], dimensions: ["time:month"] },
  { metrics: ["bounce_rate", "visitors", "leads"], dimensions: ["time:week"] },
  { metrics: ["visit_duration", "visitors"], dimensions: ["visit:channel"] },
  { metrics: ["visitors", "pageviews"], dimensions: ["visit:entry_page"] },
  // The dashboard's Ad channels: revenue beside the sums, from the valued events.
  { metrics: ["visits", "events", "leads", "revenue"], dimensions: ["visit:utm_campaign"] },
];
/** Per zone: all the data, a whole month, a few days, one day (less than a whole UTC day). */
const RANGES: Json[] = [
  ["2026-09-20", "2026-11-10"],
  ["2026-10-01", "2026-10-31"],
  ["2026-10-08", "2026-10-14"],
  ["2026-10-10", "2026-10-10"],
];

const answersOf = (db: Database, body: Record<string, Json>, zone: string) =>
  answersFor(db, SITE, body, zone);

/** Every query in every zone and range equals the reference, on the periods path; answers the visitors counted. */
async function compareAll(db: Database, zones = TEST_ZONES) {
  let visitors = 0;
  for (const zone of zones) {
    for (const date_range of RANGES) {
      for (const body of QUERIES) {
        const { path, derived, reference } = await answersOf(db, { ...body, date_range }, zone);
        const label = `${JSON.stringify(body)} ${zone} ${date_range}`;
        expect(path, label).toBe("periods");
        expect(derived, label).toEqual(reference);
        visitors += Number(
          reference.rows[0]?.metrics[(body.metrics as string[]).indexOf("visitors")] ?? 0,
        );
      }
      for (const body of WITH_TOTALS) {
        const { path, derived, reference } = await answersFor(
          db,
          SITE,
          { ...body, date_range },
          zone,
          true,
        );
        const label = `${JSON.stringify(body)} with totals ${zone} ${date_range}`;
        expect(path, label).toBe("periods");
        expect(reference.totals, label).toBeDefined();
        expect(derived, label).toEqual(reference);
      }
    }
  }
  return visitors;
}

const count = (db: Database, table: string) => siteRows(db, table, SITE);

describe.each(STORAGES)("summaries from the visitor days on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: TRAFFIC_FROM,
      toMs: TRAFFIC_TO,
      pageViews: 1500,
      eventsPerView: 0.3,
      seed: 8,
    });
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it("answer as the stored rows do before anything is built", async () => {
    expect(await count(db, "visitor_attribute_builds")).toBe(0);
    expect(await compareAll(db)).toBeGreaterThan(1000);
  }, 120_000);

  it("answer as the stored rows do once built, reading the visitor days", async () => {
    const { built } = await buildVisitorDays(db, SITE, NOW);
    expect(built).toBe(DAYS_TO_NOW);
    // Kept for all visits and for every visit attribute.
    const [kept] = await db.query<{ attributes: string[] }>(
      `select array_agg(distinct attribute order by attribute) as attributes
         from ingest.visitor_attribute_returns where site_id = $1`,
      [SITE],
    );
    expect(kept.attributes).toEqual(["*", ...VISIT_ATTRIBUTES].sort());
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBe(0);
    // A day that has not ended is not built.
    expect((await buildVisitorDays(db, SITE, NOW + DAY_MS - 1)).built).toBe(0);
    for (const zone of TEST_ZONES) {
      await buildPeriodSums(db, SITE, zone, NOW);
      await compareAll(db, [zone]);
    }
    // A stored count changed by hand shows in the answer: the query read it, not the slices.
    const month = { ...QUERIES[1], date_range: RANGES[1] };
    const before = await answersOf(db, month, "UTC");
    const bump = (by: number) =>
      db.query(
        `update ingest.visitor_attribute_returns set visitors = visitors + $2
          where site_id = $1 and attribute = '*' and day = '2026-10-15T00:00:00Z'
            and since = '-infinity'`,
        [SITE, by],
      );
    await bump(1000);
    const misread = await answersOf(db, month, "UTC");
    expect(misread.derived!.rows[0].metrics[0]).toBe(
      Number(before.reference.rows[0].metrics[0]) + 1000,
    );
    await bump(-1000);
    // So does a count of one value, in a breakdown by an attribute: per value too.
    for (const attribute of ["channel", "source", "country"]) {
      const byValue = {
        metrics: ["visitors", "visits"],
        dimensions: [`visit:${attribute}`],
        date_range: RANGES[1],
      };
      const [value] = await db.query<{ value_key: string }>(
        `select value_key from ingest.visitor_attribute_returns
          where site_id = $1 and attribute = $2 and day = '2026-10-15T00:00:00Z'
            and value_key like '=%'
          order by value_key limit 1`,
        [SITE, attribute],
      );
      const bumpValue = (by: number) =>
        db.query(
          `update ingest.visitor_attribute_returns set visitors = visitors + $4
            where site_id = $1 and attribute = $2 and day = '2026-10-15T00:00:00Z'
              and value_key = $3
              and since = (select min(since) from ingest.visitor_attribute_returns
                            where site_id = $1 and attribute = $2
                              and day = '2026-10-15T00:00:00Z' and value_key = $3)`,
          [SITE, attribute, value.value_key, by],
        );
      const valueVisitors = (answer: Awaited<ReturnType<typeof answersOf>>["reference"]) =>
        Number(answer.rows.find((r) => r.dims[0] === value.value_key.slice(1))!.metrics[0]);
      const exact = await answersOf(db, byValue, "UTC");
      expect(exact.path, attribute).toBe("periods");
      await bumpValue(500);
      const misread = await answersOf(db, byValue, "UTC");
      expect(valueVisitors(misread.derived!), attribute).toBe(valueVisitors(exact.reference) + 500);
      await bumpValue(-500);
    }
  }, 180_000);

  it("are not used once rows arrive for their days, until built again", async () => {
    await writeLastRowFirst(db, lateTraffic(SITE));
    await compareAll(db, ["UTC", "Asia/Kathmandu"]);
    // The builder starts again at the first day the late rows changed.
    const [first] = await db.query<{ day: string }>(
      `select min(received_at)::text as day
         from (select received_at from ingest.page_views
                where site_id = $1 and session_id like 'late%'
               union all
               select received_at from ingest.events
                where site_id = $1 and session_id like 'late%') r`,
      [SITE],
    );
    const firstDay = Math.floor(Date.parse(first.day) / DAY_MS) * DAY_MS;
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBe((NOW - firstDay) / DAY_MS);
    await compareAll(db, ["UTC", "Asia/Kathmandu"]);
  }, 180_000);

  it("never builds a day whose previous day is stale", async () => {
    // A late row on 2026-10-03 makes that day and all after it stale.
    await writeLastRowFirst(db, {
      siteId: SITE,
      fromMs: Date.parse("2026-10-03T10:00:00Z"),
      toMs: Date.parse("2026-10-03T12:00:00Z"),
      pageViews: 3,
      eventsPerView: 0,
      seed: 3,
      idPrefix: "stale",
    });
    const oct = Date.parse("2026-10-10T00:00:00Z");
    expect(await buildDayRange(db, SITE, oct, oct + 3 * DAY_MS)).toBe(0);
    // The days it would have built stay unbuilt and the answers exact.
    const [builds] = await db.query<{ n: number }>(
      `select count(*)::int as n from ingest.visitor_attribute_builds
        where site_id = $1 and day >= '2026-10-10T00:00:00Z'`,
      [SITE],
    );
    expect(builds.n).toBe(0);
    await compareAll(db, ["America/New_York"]);
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBe(
      (NOW - Date.parse("2026-10-03T00:00:00Z")) / DAY_MS,
    );
    await compareAll(db, ["America/New_York"]);
  }, 180_000);

  it("stay exact through visitor deletion, retention and the rebuild", async () => {
    await deleteVisitor(db, SITE, await busiestVisitor(db, SITE), true);
    await compareAll(db, ["Australia/Sydney"]);
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBeGreaterThan(0);
    await compareAll(db, ["Australia/Sydney"]);
    await runRetention(db, new Partitions(db), 40, Date.parse("2026-11-20T10:07:00Z"));
    await compareAll(db, ["UTC"]);
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBe(DAYS_TO_NOW);
    await compareAll(db, ["UTC"]);
    // The rebuild counts a change on every day with slices: built again from the first.
    await db.transaction((tx) => rebuildSite(tx, SITE));
    await compareAll(db, ["Asia/Kathmandu"]);
    const [kept] = await db.query<{ first: string }>(
      "select min(bucket)::text as first from ingest.visit_slices where site_id = $1",
      [SITE],
    );
    const firstKept = Math.floor(Date.parse(kept.first) / DAY_MS) * DAY_MS;
    expect((await buildVisitorDays(db, SITE, NOW)).built).toBe((NOW - firstKept) / DAY_MS);
    await compareAll(db);
    // Every day from the first the site ever had, whatever retention emptied included.
    expect(await count(db, "visitor_attribute_builds")).toBe(DAYS_TO_NOW);
  }, 240_000);
});

describe("coverOf", () => {
  it("covers a range with its whole local months and the days of the rest", () => {
    const zone = "Europe/Berlin";
    // 2026-09-29 to 2026-11-02 in Berlin (local midnights: UTC+2 until 25 October, then UTC+1).
    const from = Date.parse("2026-09-28T22:00:00Z");
    const to = Date.parse("2026-11-02T23:00:00Z");
    const periods = coverOf(zone, from, to);
    const text = periods.map((p) =>
      `${new Date(p.start).toISOString()}/${(p.end - p.start) / 3_600_000}h`
    );
    expect(text).toEqual([
      "2026-09-28T22:00:00.000Z/24h",
      "2026-09-29T22:00:00.000Z/24h",
      "2026-09-30T22:00:00.000Z/745h", // October, with its 25-hour day
      "2026-10-31T23:00:00.000Z/24h",
      "2026-11-01T23:00:00.000Z/24h",
    ]);
    // Contiguous, from the range's start to its end.
    periods.forEach((p, i) => expect(p.start).toBe(i === 0 ? from : periods[i - 1].end));
    expect(periods.at(-1)!.end).toBe(to);
    // A range of whole months is those months alone.
    expect(coverOf(zone, Date.parse("2026-09-30T22:00:00Z"), Date.parse("2026-11-30T23:00:00Z")))
      .toHaveLength(2);
  });
});
