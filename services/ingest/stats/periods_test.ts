/**
 * The visit sums per local period against the stored rows, on both storages:
 * the queries they answer (days, weeks and months, alone or by a visit attribute) in
 * four zones must equal the reference engine's answers when no sums are
 * built (each period computed from the slices), when they are built, after
 * late rows make some stale (the query must notice and read the slices),
 * and after visitor deletion, retention and the rebuild.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import type { Database } from "../../lib/db/mod.ts";
import { Partitions } from "../partitions.ts";
import type { WriteItem } from "../rows.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { rebuildSite } from "./derived.ts";
import { buildPeriodSums, inStatements, periodsToBuild } from "./periods.ts";
import type { Json } from "../../lib/stats/wire.ts";
import {
  answersOf as answersFor,
  busiestVisitor,
  databaseWithTraffic,
  lateTraffic,
  TEST_ZONES,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
  writeLastRowFirst,
} from "./test_traffic.ts";

const SITE = "periods";
const DAY_MS = 86_400_000;
const FROM = TRAFFIC_FROM;
const TO = TRAFFIC_TO;
const NOW = Date.parse("2026-11-20T00:00:00Z");
const ZONES = TEST_ZONES;

const QUERIES: Record<string, Json>[] = [
  TRAFFIC_QUERY,
  { metrics: ["visitors", "visits", "pageviews"], dimensions: ["time:month"] },
  {
    metrics: ["views_per_visit", "visitors", "events", "leads"],
    dimensions: ["visit:channel", "time:week"],
  },
  { metrics: ["visit_duration", "bounce_rate"], dimensions: ["time:day"] },
  // Any other visit attribute, as channel.
  { metrics: ["visitors", "visits", "bounce_rate"], dimensions: ["time:day", "visit:country"] },
  {
    metrics: ["visitors", "pageviews", "events"],
    dimensions: ["visit:utm_campaign", "time:month"],
  },
  // Revenue per value and currency, kept beside the sums (the dashboard's Ad channels).
  { metrics: ["visits", "events", "revenue"], dimensions: ["time:week", "visit:source"] },
  // Filters on one attribute: its kept values' sums added up (the Ad channels' "any ad link").
  {
    metrics: ["visits", "events", "leads", "revenue", "bounce_rate"],
    dimensions: ["time:day"],
    filters: [["contains", "visit:utm_source", [""]]],
  },
  {
    metrics: ["pageviews", "visit_duration", "revenue"],
    dimensions: ["visit:channel"],
    filters: [["is_not", "visit:channel", ["direct", "organic"]]],
  },
];
/** Per zone: a month, a few days cutting weeks, a daylight-saving day, two months. */
const RANGES: Record<string, Json[]> = {
  "UTC": [["2026-10-01", "2026-10-31"], ["2026-10-08", "2026-10-14"]],
  "Asia/Kathmandu": [["2026-10-01", "2026-10-31"], ["2026-10-10", "2026-10-12"]],
  "America/New_York": [["2026-10-01", "2026-11-04"], ["2026-11-01", "2026-11-01"]],
  "Australia/Sydney": [["2026-09-28", "2026-10-31"], ["2026-10-04", "2026-10-04"]],
};

const answersOf = (db: Database, body: Record<string, Json>, zone: string) =>
  answersFor(db, SITE, body, zone);

/**
 * Every query in every zone and range from the period sums equals the
 * reference; with `build`, each zone's sums are built first (a site keeps
 * one zone's: building another's removes them). Answers the groups compared
 * and the periods built.
 */
async function compareAll(db: Database, zones = ZONES, build = false) {
  let rows = 0;
  let built = 0;
  for (const zone of zones) {
    if (build) built += (await buildPeriodSums(db, SITE, zone, NOW)).built;
    for (const date_range of RANGES[zone]) {
      for (const body of QUERIES) {
        const { path, derived, reference } = await answersOf(db, { ...body, date_range }, zone);
        const label = `${JSON.stringify(body)} ${zone} ${date_range}`;
        expect(path, label).toBe("periods");
        expect(derived, label).toEqual(reference);
        rows += reference.rows.length;
      }
    }
  }
  return { rows, built };
}

/** A visit of `items` carried on a day and a half later: one long visit across days. */
function stretched(items: WriteItem[]): WriteItem[] {
  const views = items.filter((i) => i.kind === "view");
  const later = views.map((i) => ({
    ...i,
    row: {
      ...i.row,
      received_at: new Date(Date.parse(i.row.received_at) + 1.5 * DAY_MS).toISOString(),
    },
  })) as WriteItem[];
  return [...items, ...later];
}

describe.each(STORAGES)("the visit sums per local period on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    // A few visits last a day and a half: they cross every kind of period boundary.
    fresh = await databaseWithTraffic(
      storage,
      { siteId: SITE, fromMs: FROM, toMs: TO, pageViews: 1500, eventsPerView: 0.3, seed: 5 },
      (visit, i) => (i % 40 === 0 ? stretched(visit) : visit),
    );
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it("answer as the stored rows do before any sums are built", async () => {
    const [stored] = await db.query<{ n: number }>(
      "select count(*)::int as n from ingest.visit_attribute_periods where site_id = $1",
      [SITE],
    );
    expect(stored.n).toBe(0);
    // The writer kept the site's longest visit exactly: a day and a half and a bit.
    const [span] = await db.query<{ stored: string; longest: string }>(
      `select (select extract(epoch from longest)::text from ingest.visit_spans
                where site_id = $1) as stored,
              (select extract(epoch from max(last_seen - first_seen))::text from ingest.visits
                where site_id = $1) as longest`,
      [SITE],
    );
    expect(Number(span.longest)).toBeGreaterThan(1.5 * 86_400);
    expect(span.stored).toBe(span.longest);
    expect((await compareAll(db)).rows).toBeGreaterThan(500);
    // A builder told to stop builds nothing more.
    const stopped = await buildPeriodSums(db, SITE, "UTC", NOW, AbortSignal.abort());
    expect(stopped.built).toBe(0);
    expect(stopped.current).toBe(0);
  }, 120_000);

  it("answer as the stored rows do from built sums, which the queries do read", async () => {
    const { built } = await compareAll(db, ZONES, true);
    // Days, weeks and months in four zones over about six weeks of data.
    expect(built).toBeGreaterThan(4 * 45);
    const again = await buildPeriodSums(db, SITE, ZONES[3], NOW);
    expect(again).toMatchObject({ built: 0, removed: 0 });
    expect(again.current).toBeGreaterThan(45);
    // The zone changes: the old zone's sums go, the new zone's are built.
    const moved = await buildPeriodSums(db, SITE, "UTC", NOW);
    expect(moved.removed).toBe(again.current);
    expect(moved.built).toBeGreaterThan(45);
    // A stored sum changed by hand shows in the answer: the query read it, not the slices.
    const day = { ...QUERIES[0], date_range: RANGES.UTC[0] };
    const before = await answersOf(db, day, "UTC");
    await db.query(
      `update ingest.visit_attribute_sums set visitors = visitors + 1000
        where site_id = $1 and period_start = '2026-10-12T00:00:00Z'
          and period_end = '2026-10-13T00:00:00Z' and attribute = 'channel' and value_key = '=direct'`,
      [SITE],
    );
    const misread = await answersOf(db, day, "UTC");
    expect(misread.derived).not.toEqual(misread.reference);
    expect(misread.reference).toEqual(before.reference);
    await db.query(
      `update ingest.visit_attribute_sums set visitors = visitors - 1000
        where site_id = $1 and period_start = '2026-10-12T00:00:00Z'
          and period_end = '2026-10-13T00:00:00Z' and attribute = 'channel' and value_key = '=direct'`,
      [SITE],
    );
    // So does a stored revenue: the query read it too.
    const byValue = {
      metrics: ["revenue"],
      dimensions: ["time:day", "visit:channel"],
      date_range: RANGES.UTC[0],
    };
    const exact = await answersOf(db, byValue, "UTC");
    expect(exact.path).toBe("periods");
    const bumpRevenue = (by: number) =>
      db.query(
        `update ingest.visit_attribute_revenue set revenue = revenue + $2
          where site_id = $1 and period_start = '2026-10-12T00:00:00Z'
            and period_end = '2026-10-13T00:00:00Z' and attribute = 'channel'`,
        [SITE, by],
      );
    const [stored] = await db.query<{ n: number }>(
      `select count(*)::int as n from ingest.visit_attribute_revenue
        where site_id = $1 and period_start = '2026-10-12T00:00:00Z'
          and period_end = '2026-10-13T00:00:00Z' and attribute = 'channel'`,
      [SITE],
    );
    expect(stored.n).toBeGreaterThan(0);
    await bumpRevenue(7);
    expect((await answersOf(db, byValue, "UTC")).derived).not.toEqual(exact.reference);
    await bumpRevenue(-7);
    expect((await answersOf(db, byValue, "UTC")).derived).toEqual(exact.reference);
  }, 120_000);

  it("are not used once rows arrive for their days, until built again", async () => {
    // Late visits, each written last row first: earlier rows re-home them.
    await writeLastRowFirst(db, lateTraffic(SITE));
    // The UTC sums built above are stale now where the late rows fell.
    await compareAll(db, ["UTC"]);
    const { built } = await compareAll(db, ZONES, true);
    expect(built).toBeGreaterThan(0);
  }, 180_000);

  it("stay exact through visitor deletion, retention and the rebuild", async () => {
    const visitor = await busiestVisitor(db, SITE);
    const zone = "Australia/Sydney"; // the zone built last
    await deleteVisitor(db, SITE, visitor, true);
    await compareAll(db, [zone]);
    await compareAll(db, ["Asia/Kathmandu"], true);
    await runRetention(db, new Partitions(db), 40, Date.parse("2026-11-20T10:07:00Z"));
    await compareAll(db, ["Asia/Kathmandu"]);
    await compareAll(db, ["America/New_York"], true);
    const changes = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(changes.every((c) => c.added + c.removed + c.changed === 0)).toBe(true);
    await compareAll(db, ["America/New_York"]);
    // The rebuild counts a change on every day of the site's slices: every period with any is
    // built again (those left current hold none: retention emptied them).
    const after = await buildPeriodSums(db, SITE, "America/New_York", NOW);
    expect(after.built).toBeGreaterThan(10);
    const [withSums] = await db.query<{ n: number }>(
      `select count(*)::int as n from ingest.visit_attribute_periods p
        where site_id = $1 and exists (select 1 from ingest.visit_attribute_sums s
                where s.site_id = p.site_id and s.period_start = p.period_start
                  and s.period_end = p.period_end)`,
      [SITE],
    );
    expect(withSums.n).toBeLessThanOrEqual(after.built);
    await compareAll(db);
  }, 180_000);

  // PGlite has one connection: there the builder and the writer take turns anyway.
  it.runIf(storage === "postgres")(
    "stay exact when built while rows arrive for the same days",
    async () => {
      const zone = "America/New_York";
      await buildPeriodSums(db, SITE, zone, NOW); // so that the builds below race the writes
      let writing = true;
      const writes = writeLastRowFirst(db, {
        siteId: SITE,
        fromMs: Date.parse("2026-10-06T00:00:00Z"),
        toMs: Date.parse("2026-10-20T00:00:00Z"),
        pageViews: 150,
        eventsPerView: 0.3,
        seed: 21,
        idPrefix: "race",
      }).finally(() => (writing = false));
      let builds = 0;
      let built = 0;
      while (writing) {
        built += (await buildPeriodSums(db, SITE, zone, NOW)).built;
        builds++;
      }
      await writes;
      // Each build found periods the writes had made stale since the one before.
      expect(builds).toBeGreaterThan(2);
      expect(built).toBeGreaterThan(builds);
      // Whatever the last build saw: sums it stored as current are, the rest read the slices.
      await compareAll(db, [zone]);
    },
    180_000,
  );
});

describe("inStatements", () => {
  const days = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      start: from + i * DAY_MS,
      end: from + (i + 1) * DAY_MS,
    }));
  it("puts at most 8 periods and 31 days in one statement", () => {
    expect(inStatements(days(20)).map((c) => c.length)).toEqual([8, 8, 4]);
    const month = { start: 0, end: 31 * DAY_MS };
    const week = { start: 0, end: 7 * DAY_MS };
    expect(inStatements([month, month, week, ...days(2), ...days(30)]).map((c) => c.length))
      .toEqual([1, 1, 8, 8, 8, 8, 1]);
    // Four weeks and three days make 31 days; a fourth day starts another statement.
    expect(inStatements([week, week, week, week, ...days(4)]).map((c) => c.length)).toEqual([
      7,
      1,
    ]);
    expect(inStatements([])).toEqual([]);
  });
});

describe("periodsToBuild", () => {
  it("lists the ended days, weeks and months of a zone that cover days with data", () => {
    const day = Date.parse("2026-10-05T00:00:00Z");
    const periods = periodsToBuild([day], "Asia/Kathmandu", Date.parse("2026-11-20T00:00:00Z"));
    const text = periods.map((p) => `${new Date(p.start).toISOString()}`);
    // The UTC day 2026-10-05 falls on the local 5th and 6th (UTC+05:45), in one week and month.
    expect(text).toEqual([
      "2026-09-30T18:15:00.000Z", // October
      "2026-10-04T18:15:00.000Z", // the week of Monday the 5th
      "2026-10-05T18:15:00.000Z", // the 6th
      "2026-10-04T18:15:00.000Z", // the 5th
    ]);
    expect(periods.map((p) => (p.end - p.start) / DAY_MS)).toEqual([31, 7, 1, 1]);
    // Periods not yet over are left for later.
    expect(periodsToBuild([day], "UTC", Date.parse("2026-10-06T00:00:00Z"))).toEqual([
      { start: day, end: day + DAY_MS },
    ]);
  });
});
