/**
 * Queries by page (event:page) from the page counts per UTC day, against the
 * stored rows, on both storages: in four zones, before anything is built
 * (everything from the rows), once built (the counts read, which a changed
 * count shows), after late rows make days stale, and through visitor
 * deletion, retention and the rebuild.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import type { Database } from "../../lib/db/mod.ts";
import { Partitions } from "../partitions.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { rebuildSite } from "./derived.ts";
import { buildPageDays } from "./pages.ts";
import type { WriteItem } from "../rows.ts";
import { writeGroup } from "../writer.ts";
import type { Json } from "../../lib/stats/wire.ts";
import {
  answersOf as answersFor,
  busiestVisitor,
  databaseWithTraffic,
  lateTraffic,
  siteRows,
  TEST_ZONES,
  TRAFFIC_FROM,
  TRAFFIC_TO,
  writeLastRowFirst,
} from "./test_traffic.ts";

const SITE = "pages";
const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-11-20T00:00:00Z");
/** The UTC days of the traffic (all ended, all built). */
const TRAFFIC_DAYS = (TRAFFIC_TO - TRAFFIC_FROM) / DAY_MS;

const QUERIES: Record<string, Json>[] = [
  // The dashboard's pages of a kind, and the benchmark's.
  { metrics: ["pageviews", "events"], dimensions: ["event:page"] },
  {
    metrics: ["pageviews", "events", "leads", "revenue"],
    dimensions: ["event:page"],
    filters: [["contains", "event:page", ["BLOG"]]],
  },
  // Leads have no page: they count under none, and wherever a filter keeps none.
  { metrics: ["leads", "pageviews"], filters: [["is_not", "event:page", ["/"]]] },
  {
    metrics: ["events", "revenue"],
    dimensions: ["event:name", "event:page"],
    filters: [["contains_not", "event:page", ["/docs"]]],
  },
  // By day: whole UTC days in UTC, the rows in a zone whose midnights cut them.
  { metrics: ["pageviews"], dimensions: ["time:day", "event:page"] },
  // By month: a zone's inner days of a month are whole UTC days in one bucket.
  { metrics: ["pageviews", "revenue"], dimensions: ["time:month", "event:page"] },
  {
    metrics: ["pageviews", "events"],
    dimensions: ["event:page"],
    filters: [["is", "event:page", ["/pricing", "/contact"]]],
    include: { bots: true },
  },
];
/** Per zone: all the data, a whole month, a few days, one day (less than a whole UTC day). */
const RANGES: Json[] = [
  ["2026-09-20", "2026-11-10"],
  ["2026-10-01", "2026-10-31"],
  ["2026-10-08", "2026-10-14"],
  ["2026-10-10", "2026-10-10"],
];

/** Every query in every zone and range equals the reference on the pages path; answers the page views counted. */
async function compareAll(db: Database, zones = TEST_ZONES) {
  let pageviews = 0;
  for (const zone of zones) {
    for (const date_range of RANGES) {
      for (const body of QUERIES) {
        const query = { ...body, date_range };
        const { path, derived, reference } = await answersFor(db, SITE, query, zone);
        const label = `${JSON.stringify(body)} ${zone} ${date_range}`;
        expect(path, label).toBe("pages");
        expect(derived, label).toEqual(reference);
        for (const row of reference.rows) {
          pageviews += Number(row.metrics[(body.metrics as string[]).indexOf("pageviews")] ?? 0);
        }
      }
      const totals = { ...QUERIES[0], date_range };
      const { path, derived, reference } = await answersFor(db, SITE, totals, zone, true);
      expect(path).toBe("pages");
      expect(reference.totals).toBeDefined();
      expect(derived, `totals ${zone} ${date_range}`).toEqual(reference);
    }
  }
  return pageviews;
}

const count = (db: Database, table: string) => siteRows(db, table, SITE);

describe.each(STORAGES)("queries by page from the page counts on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: TRAFFIC_FROM,
      toMs: TRAFFIC_TO,
      pageViews: 1500,
      eventsPerView: 0.3,
      seed: 9,
    });
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it("answer as the stored rows do before anything is built", async () => {
    expect(await count(db, "page_day_builds")).toBe(0);
    expect(await compareAll(db)).toBeGreaterThan(1000);
  }, 120_000);

  it("answer as the stored rows do once built, reading the counts", async () => {
    expect((await buildPageDays(db, SITE, NOW)).built).toBe(TRAFFIC_DAYS);
    expect((await buildPageDays(db, SITE, NOW)).built).toBe(0);
    // A day that has not ended is not built.
    const [last] = await db.query<{ day: string }>(
      "select max(day)::text as day from ingest.page_day_builds where site_id = $1",
      [SITE],
    );
    await db.query("delete from ingest.page_day_builds where site_id = $1 and day = $2", [
      SITE,
      last.day,
    ]);
    expect((await buildPageDays(db, SITE, Date.parse(last.day) + DAY_MS - 1)).built).toBe(0);
    expect((await buildPageDays(db, SITE, NOW)).built).toBe(1);
    await compareAll(db);
    // A stored count changed by hand shows in the answer: the query read it, not the rows.
    const month = { ...QUERIES[0], date_range: RANGES[1] };
    const pricing = (answer: Awaited<ReturnType<typeof answersFor>>["reference"]) =>
      Number(answer.rows.find((r) => r.dims[0] === "/pricing")!.metrics[0]);
    const before = await answersFor(db, SITE, month, "UTC");
    const bump = (by: number) =>
      db.query(
        `update ingest.page_day_counts set n = n + $2
          where site_id = $1 and day = '2026-10-15T00:00:00Z' and page = '/pricing'
            and kind = 1 and not bot`,
        [SITE, by],
      );
    await bump(1000);
    const misread = await answersFor(db, SITE, month, "UTC");
    expect(pricing(misread.derived!)).toBe(pricing(before.reference) + 1000);
    await bump(-1000);
    expect((await answersFor(db, SITE, month, "UTC")).derived).toEqual(before.reference);
  }, 180_000);

  it("are not read for days whose rows changed, until built again", async () => {
    // One server event without a session (a visit of its own, which has no row in
    // ingest.visits) alone on a built day: that day is stale, and built again alone.
    const lone: WriteItem = {
      kind: "event",
      row: {
        site_id: SITE,
        received_at: "2026-10-28T10:00:00.000Z",
        name: "lone",
        event_id: null,
        visitor_id: "lone-visitor",
        session_id: null,
        url: "https://gen.example/lone",
        params: {},
        value: null,
        currency: null,
        source: "server",
        bot: false,
      },
    };
    await db.transaction((tx) => writeGroup(tx, [lone], true, { endsTransaction: true }));
    const oneDay = { metrics: ["events"], dimensions: ["event:page"], date_range: RANGES[1] };
    const fresh = await answersFor(db, SITE, oneDay, "UTC");
    expect(fresh.derived).toEqual(fresh.reference);
    expect(fresh.reference.rows.find((r) => r.dims[0] === "/lone")?.metrics).toEqual([1]);
    expect((await buildPageDays(db, SITE, NOW)).built).toBe(1);
    await compareAll(db, ["UTC"]);
    await writeLastRowFirst(db, lateTraffic(SITE));
    await compareAll(db, ["UTC", "Asia/Kathmandu"]);
    // Every day the late visits touched, and those alone, is built again.
    const [touched] = await db.query<{ n: number }>(
      `select count(distinct date_bin('1 day', received_at, timestamptz 'epoch'))::int as n
         from (select received_at from ingest.page_views
                where site_id = $1 and session_id like 'late%'
               union all
               select received_at from ingest.events
                where site_id = $1 and session_id like 'late%') r`,
      [SITE],
    );
    expect((await buildPageDays(db, SITE, NOW)).built).toBe(touched.n);
    await compareAll(db, ["UTC", "America/New_York"]);
  }, 180_000);

  it("stay exact through visitor deletion, retention and the rebuild", async () => {
    await deleteVisitor(db, SITE, await busiestVisitor(db, SITE), true);
    await compareAll(db, ["Australia/Sydney"]);
    expect((await buildPageDays(db, SITE, NOW)).built).toBeGreaterThan(0);
    await compareAll(db, ["Australia/Sydney"]);
    await runRetention(db, new Partitions(db), 40, Date.parse("2026-11-20T10:07:00Z"));
    await compareAll(db, ["UTC"]);
    expect((await buildPageDays(db, SITE, NOW)).built).toBeGreaterThan(0);
    await compareAll(db, ["UTC"]);
    // The rebuild counts a change on every day with slices: all built again.
    await db.transaction((tx) => rebuildSite(tx, SITE));
    await compareAll(db, ["Asia/Kathmandu"]);
    expect((await buildPageDays(db, SITE, NOW)).built).toBeGreaterThan(0);
    await compareAll(db);
  }, 240_000);
});
