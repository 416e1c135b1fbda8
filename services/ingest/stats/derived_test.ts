/**
 * The derived tables against the stored rows, on both storages: generated
 * traffic written through the writer, then a set of contract queries
 * answered from the derived tables (or the rows without visits) and from
 * the rows alone (the reference engine), in several zones (a 45-minute offset, days of a daylight-saving
 * change), must agree exactly. Then visits whose earlier rows arrive last
 * (their slices re-homed), visitor deletion, retention and the rebuild keep
 * them equal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import type { Database } from "../../lib/db/mod.ts";
import { Partitions } from "../partitions.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { derivedEngine, derivedPartials } from "./derived_engine.ts";
import { referenceEngine, referencePartials } from "./reference.ts";
import { rebuildSite } from "./derived.ts";
import { buildPageDays } from "./pages.ts";
import { finish } from "./finish.ts";
import { parseQuery } from "./query.ts";
import { planQuery } from "./service.ts";
import { daysOf } from "./ranges.ts";
import type { Json } from "../../lib/stats/wire.ts";
import {
  answersOf as answersFor,
  busiestVisitor,
  databaseWithTraffic,
  TEST_ZONES,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
  writeLastRowFirst,
} from "./test_traffic.ts";

const SITE = "derived";
const FROM = TRAFFIC_FROM;
const TO = TRAFFIC_TO;
const ZONES = TEST_ZONES;

const QUERIES: Record<string, Json>[] = [
  TRAFFIC_QUERY,
  { metrics: ["pageviews", "visitors", "views_per_visit"], dimensions: ["time:hour"] },
  { metrics: ["pageviews", "events", "leads", "revenue"], dimensions: ["time:month"] },
  { metrics: ["pageviews", "events", "leads"], dimensions: ["time:week"] },
  { metrics: ["visitors", "visits"], dimensions: ["visit:entry_page", "visit:source"] },
  {
    metrics: ["visits", "visitors", "pageviews"],
    dimensions: ["visit:country", "visit:device", "visit:browser"],
  },
  {
    metrics: ["visits", "bounce_rate"],
    dimensions: ["visit:visitor_type", "visit:utm_campaign"],
    filters: [["is_not", "visit:channel", ["direct"]]],
  },
  {
    metrics: ["pageviews", "visitors"],
    dimensions: ["time:day"],
    filters: [["contains", "visit:entry_page", ["BLOG"]]],
  },
  { metrics: ["events", "revenue"], dimensions: ["event:name", "time:day"] },
  { metrics: ["events", "revenue"], filters: [["is", "event:name", ["purchase"]]] },
  { metrics: ["revenue", "visitors", "visit_duration"], dimensions: ["time:day"] },
  // The dashboard's Events: one event's conversion rate, the range's visitors from the tables.
  { metrics: ["conversion_rate"], filters: [["is", "event:name", ["purchase"]]] },
  {
    metrics: ["conversion_rate"],
    filters: [["contains", "event:name", ["UP"]], ["is_not", "event:name", ["download"]]],
  },
  // Revenue by visit: attributes: each valued event's slice (the dashboard's Ad channels).
  { metrics: ["visits", "events", "leads", "revenue"], dimensions: ["visit:source"] },
  {
    metrics: ["revenue", "visits"],
    dimensions: ["time:day", "visit:channel"],
    filters: [["is_not", "visit:channel", ["direct"]]],
  },
  {
    metrics: ["events", "revenue"],
    filters: [["contains", "visit:entry_page", ["/"]]],
    include: { bots: true },
  },
  { metrics: ["visitors"], include: { bots: true } },
  {
    metrics: ["visits", "pageviews"],
    dimensions: ["time:hour", "visit:channel"],
    include: { bots: true },
  },
  // Nothing of visits: the rows without visits.
  {
    metrics: ["pageviews", "events", "visitors"],
    dimensions: ["event:page"],
    filters: [["contains", "event:page", ["BLOG"]]],
  },
  {
    metrics: ["pageviews", "events", "leads"],
    dimensions: ["event:page", "time:week"],
    filters: [["is", "event:page", ["/", "/pricing"]]],
    include: { bots: true },
  },
  {
    metrics: ["conversion_rate", "visitors", "revenue"],
    dimensions: ["time:day", "event:page"],
    filters: [["is", "event:name", ["purchase"]]],
    include: { bots: true },
  },
];
const MONTH: Json = ["2026-10-01", "2026-10-31"];
/**
 * Enough traffic that every query has many groups to get right (the first
 * test asserts it: more than 50 rows of days by channel in a month) and
 * enough late visits to re-home slices (more than 10); every comparison reads
 * all of it twice, so more rows only cost time.
 */
const TRAFFIC_PAGE_VIEWS = 1200;
const LATE_PAGE_VIEWS = 200;
/** Per zone, the ranges worth asking: a month, and its daylight-saving day or a few days. */
const RANGES: Record<string, Json[]> = {
  "UTC": [MONTH],
  "Asia/Kathmandu": [MONTH, ["2026-10-10", "2026-10-12"]],
  "America/New_York": [MONTH, ["2026-11-01", "2026-11-01"]], // 25 hours
  "Australia/Sydney": [MONTH, ["2026-10-04", "2026-10-04"]], // 23 hours
};

const answersOf = (db: Database, body: Record<string, Json>, zone: string, totals = true) =>
  answersFor(db, SITE, body, zone, totals);

/** Every query in every zone and range: derived == reference; answers how many used each path. */
async function compareAll(db: Database, zones = ZONES): Promise<Record<string, number>> {
  const used: Record<string, number> = {};
  for (const zone of zones) {
    for (const date_range of RANGES[zone]) {
      for (const body of QUERIES) {
        const { path, derived, reference } = await answersOf(db, { ...body, date_range }, zone);
        used[path ?? "reference"] = (used[path ?? "reference"] ?? 0) + 1;
        expect(derived, `${JSON.stringify(body)} ${zone} ${date_range}`).toEqual(reference);
      }
    }
  }
  return used;
}

async function derivedCounts(db: Database) {
  const [row] = await db.query<{ c: number; d: number; s: number; v: number }>(
    `select (select count(*) from ingest.stat_counters where site_id = $1)::int as c,
            (select count(*) from ingest.stat_counter_days where site_id = $1)::int as d,
            (select count(*) from ingest.visit_slices where site_id = $1)::int as s,
            (select count(*) from ingest.visits where site_id = $1)::int as v`,
    [SITE],
  );
  return row;
}

describe.each(STORAGES)("the derived tables on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: FROM,
      toMs: TO,
      pageViews: TRAFFIC_PAGE_VIEWS,
      eventsPerView: 0.3,
      seed: 7,
    });
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it("answer every contract query as the stored rows do", async () => {
    const used = await compareAll(db);
    // The comparison means something only if the queries did read the derived tables.
    // The Traffic query with its totals, the Ad channels' by visit:source, revenue with
    // visitors by day and revenue by channel without direct read the visit sums per local period
    // (periods_test.ts), revenue included.
    expect(used).toEqual({
      periods: 7 * 4,
      visits: 7 * 8,
      counters: 7 * 4,
      // Page views, events and leads by page: the page counts (pages_test.ts), not built here.
      pages: 7 * 1,
      rows: 7 * 2,
      conversion: 7 * 2,
    });
    const sample = await answersOf(db, { ...QUERIES[0], date_range: MONTH }, "UTC");
    expect(sample.reference.rows.length).toBeGreaterThan(50);
    // One event's conversion rate from the tables and the events: a share, neither 0 nor all.
    const converting = QUERIES.find((q) => JSON.stringify(q.metrics) === '["conversion_rate"]')!;
    const conversion = await answersOf(db, { ...converting, date_range: MONTH }, "UTC");
    expect(conversion.path).toBe("conversion");
    const rate = conversion.derived!.rows[0].metrics[0] as number;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(100);
    // Revenue by a visit: attribute, beside the period sums: in both currencies, in several
    // groups.
    const bySource = QUERIES.find((q) => JSON.stringify(q.dimensions) === '["visit:source"]')!;
    const revenue = await answersOf(db, { ...bySource, date_range: MONTH }, "UTC");
    expect(revenue.path).toBe("periods");
    const maps = revenue.derived!.rows.map((r) => r.metrics[3] as Map<string, bigint>);
    expect(maps.filter((m) => m.size > 0).length).toBeGreaterThan(2);
    expect(new Set(maps.flatMap((m) => [...m.keys()]))).toEqual(new Set(["EUR", "USD"]));
  }, 120_000);

  it("answer the same rows without totals, which they then leave out", async () => {
    for (const body of QUERIES) {
      const withTotals = await answersOf(db, { ...body, date_range: MONTH }, "UTC");
      const alone = await answersOf(db, { ...body, date_range: MONTH }, "UTC", false);
      const label = JSON.stringify(body);
      expect(alone.derived?.totals, label).toBeUndefined();
      expect(alone.reference.totals, label).toBeUndefined();
      expect(alone.derived?.rows, label).toEqual(withTotals.reference.rows);
      expect(alone.reference.rows, label).toEqual(withTotals.reference.rows);
      expect(alone.derived?.totalRows, label).toEqual(withTotals.reference.totalRows);
    }
  }, 120_000);

  it(
    "read the page each row's insert stored, and work it out for rows stored without one",
    async () => {
      const pages = async () => {
        const [row] = await db.query<{ stored: number; differing: number }>(
          `select count(page)::int as stored,
                count(*) filter (where page is distinct from ingest.url_path(url))::int
                  as differing
           from (select page, url from ingest.page_views where site_id = $1
                 union all select page, url from ingest.events where site_id = $1) x`,
          [SITE],
        );
        return row;
      };
      const stored = await pages();
      expect(stored.stored).toBeGreaterThan(1000);
      expect(stored.differing).toBe(0);
      // Rows as they were before the column existed (migration 7): every other one without a page.
      for (const table of ["ingest.page_views", "ingest.events"]) {
        await db.query(`update ${table} set page = null where site_id = $1 and seq % 2 = 0`, [
          SITE,
        ]);
      }
      const mixed = await pages();
      expect(mixed.stored).toBeLessThan(stored.stored * 0.6);
      expect(mixed.differing).toBe(stored.stored - mixed.stored);
      const byPage = QUERIES.filter((q) => JSON.stringify(q).includes("event:page"));
      // Page views, events, leads and revenue alone by page: the page counts (pages.ts).
      const countable = (body: Record<string, Json>) =>
        (body.metrics as string[]).every((m) =>
          ["pageviews", "events", "leads", "revenue"].includes(m)
        );
      expect(byPage.filter(countable).length).toBeGreaterThan(0);
      const compare = async () => {
        for (const body of byPage) {
          const { path, derived, reference } = await answersOf(
            db,
            { ...body, date_range: MONTH },
            "UTC",
          );
          expect(path, JSON.stringify(body)).toBe(countable(body) ? "pages" : "rows");
          expect(derived, JSON.stringify(body)).toEqual(reference);
        }
      };
      // From the rows (the page counts are not built yet), then from the counts built from them.
      await compare();
      expect((await buildPageDays(db, SITE, TRAFFIC_TO + 86_400_000)).built).toBeGreaterThan(25);
      await compare();
    },
    120_000,
  );

  it("are read by the service's engine in a transaction of its own, with its settings", async () => {
    const seen: string[] = [];
    // The store as the engine gets it, reporting the settings in force after each exec.
    const recording: Database = {
      ...db,
      transaction: (fn) =>
        db.transaction((tx) =>
          fn({
            query: (text, params) => tx.query(text, params),
            async exec(script) {
              await tx.exec(script);
              const [row] = await tx.query<{ mem: string; jit: string }>(
                "select current_setting('work_mem') as mem, current_setting('jit') as jit",
              );
              seen.push(`${row.mem} jit ${row.jit}`);
            },
          })
        ),
    };
    const body = { metrics: ["visitors", "visits"], dimensions: ["visit:channel"] };
    const query = parseQuery({ ...body, date_range: MONTH, include: { totals: true } });
    const days = daysOf(query.dateRange, "UTC");
    const plan = await planQuery(referenceEngine(db), SITE, query, "UTC", days);
    const answer = await derivedEngine(recording, { workMemMb: 7 }).partials(plan);
    expect(seen).toEqual(["7MB jit off"]);
    expect(finish(query, answer)).toEqual(finish(query, await referencePartials(db, plan)));
    // Outside that transaction the session keeps the server's setting.
    const [after] = await db.query<{ mem: string }>("select current_setting('work_mem') as mem");
    expect(after.mem).not.toBe("7MB");
  });

  it("re-home a visit's older slices when an earlier row of it arrives later", async () => {
    // Each visit written last row first, one row per transaction: every earlier page view
    // changes the visit's entry page (and source) after slices of later buckets exist.
    await writeLastRowFirst(db, {
      siteId: SITE,
      fromMs: Date.parse("2026-10-03T00:00:00Z"),
      toMs: Date.parse("2026-10-27T00:00:00Z"),
      pageViews: LATE_PAGE_VIEWS,
      eventsPerView: 0.3,
      seed: 11,
      idPrefix: "late",
    });
    const [moved] = await db.query<{ visits: number; stale: number }>(
      `select count(distinct s.visit_key) filter (where s.bucket > date_bin('15 minutes',
                v.first_at, timestamptz 'epoch') and s.entry_page is not null)::int as visits,
              count(*) filter (where (s.channel, s.source, s.entry_page, s.country)
                is distinct from (v.channel, v.source, v.entry_page, v.country))::int as stale
         from ingest.visit_slices s join ingest.visits v using (site_id, visit_key)
        where s.site_id = $1 and s.visit_key like 'slate%'`,
      [SITE],
    );
    // Visits with slices after their first page view's bucket: the case re-homing is for.
    expect(moved.visits).toBeGreaterThan(10);
    expect(moved.stale).toBe(0);
    await compareAll(db, ["UTC"]);
  }, 120_000);

  it("lose exactly a deleted visitor's rows, in the same transaction", async () => {
    const visitor = await busiestVisitor(db, SITE);
    const total = async () => {
      const q = parseQuery({
        metrics: ["pageviews", "events", "visitors"],
        date_range: ["2026-01-01", "2026-12-31"],
      });
      const days = daysOf(q.dateRange, "UTC");
      const plan = await planQuery(referenceEngine(db), SITE, q, "UTC", days);
      return finish(q, (await derivedPartials(db, plan))!).rows[0].metrics as number[];
    };
    const before = await total();
    const [own] = await db.query<{ pv: number; ev: number }>(
      `select (select count(*) from ingest.page_views where site_id = $1 and visitor_id = $2
                and not bot)::int as pv,
              (select count(*) from ingest.events where site_id = $1 and visitor_id = $2
                and bot is not true)::int as ev`,
      [SITE, visitor],
    );
    expect(own.pv).toBeGreaterThan(0);
    await deleteVisitor(db, SITE, visitor, true);
    const after = await total();
    expect(after).toEqual([before[0] - own.pv, before[1] - own.ev, before[2] - 1]);
    await compareAll(db, ["Asia/Kathmandu"]);
  }, 120_000);

  it("stay equal to the rows after retention, and a rebuild finds nothing to change", async () => {
    const now = Date.parse("2026-11-20T10:07:00Z");
    await runRetention(db, new Partitions(db), 40, now); // cutoff 2026-10-11T10:07Z, mid-bucket
    const changes = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(changes.map((c) => [c.added, c.removed, c.changed])).toEqual(Array(4).fill([0, 0, 0]));
    await compareAll(db, ["America/New_York"]);
  }, 120_000);

  it("are put right by a rebuild, which reports what it changed", async () => {
    const before = await derivedCounts(db);
    await db.query(
      `update ingest.stat_counters set n = n + 5
        where ctid = (select ctid from ingest.stat_counters where site_id = $1 limit 1)`,
      [SITE],
    );
    // A day's counter inside October: the month's counters query reads it, not its quarter hours.
    await db.query(
      `update ingest.stat_counter_days set n = n + 5
        where ctid = (select ctid from ingest.stat_counter_days
                       where site_id = $1 and kind = 1 and not bot
                         and day >= '2026-10-10T00:00:00Z' and day < '2026-10-20T00:00:00Z'
                       limit 1)`,
      [SITE],
    );
    const month = { metrics: ["pageviews"], dimensions: ["time:month"], date_range: MONTH };
    const misread = await answersOf(db, month, "UTC");
    expect(misread.path).toBe("counters");
    expect(misread.derived!.rows[0].metrics[0]).toBe(
      (misread.reference.rows[0].metrics[0] as number) + 5,
    );
    await db.query(
      `delete from ingest.visit_slices
        where ctid in (select ctid from ingest.visit_slices where site_id = $1 limit 3)`,
      [SITE],
    );
    await db.query(
      `insert into ingest.visits (site_id, visit_key, first_seen, last_seen, first_rank,
                                  first_at, first_seq)
       values ($1, 'sghost', now(), now(), false, now(), 0)`,
      [SITE],
    );
    const changes = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(changes).toEqual([
      { table: "ingest.stat_counters", added: 0, removed: 0, changed: 1 },
      { table: "ingest.stat_counter_days", added: 0, removed: 0, changed: 1 },
      { table: "ingest.visit_slices", added: 3, removed: 0, changed: 0 },
      { table: "ingest.visits", added: 0, removed: 1, changed: 0 },
    ]);
    expect(await derivedCounts(db)).toEqual(before);
    const fixed = await answersOf(db, month, "UTC");
    expect(fixed.derived).toEqual(fixed.reference);
    await compareAll(db, ["UTC"]);
  }, 120_000);
});
