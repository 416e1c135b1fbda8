/**
 * The engine against the stored rows, on each storage (see below): generated traffic
 * written through the writer, then every query below answered by the engine
 * (ingest.visits, the rows, the rollups, and rollups beside days not built)
 * and by the reference engine, in UTC, Kathmandu (+05:45), New York on its
 * 25-hour day and Sydney on its 23-hour day, must agree exactly. Then late
 * rows, a visitor's deletion, retention and the rebuild keep them equal, and
 * comparisons, time labels and funnels agree too. Storage, zone, range,
 * rollups and query are asked in all pairs rather than every combination.
 * Like the integration files it runs on one storage in `deno task test` and
 * on the other in `deno task test:system` (SYSTEM_STORAGES), each time with
 * all pairs of the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "../../../test/helpers/env.ts";
import { allPairs } from "../../../test/helpers/pairwise.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import type { Database } from "../../lib/db/mod.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { funnelBodyOf, queryBodyOf } from "../../lib/stats/wire.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { Partitions } from "../partitions.ts";
import { IngestStore } from "../storage.ts";
import { writeGroup } from "../writer.ts";
import { statsEngine } from "./engine.ts";
import { referenceEngine } from "./reference.ts";
import { buildRollups, rollupSite } from "./rollups.ts";
import { rebuildSite } from "./visits.ts";
import { StatsAnswerer } from "./service.ts";
import { generateVisits } from "../../../test/helpers/generated_traffic.ts";
import {
  answersOf,
  busiestVisitor,
  databaseWithTraffic,
  type Finished,
  lateTraffic,
  setZone,
  TEST_ZONES,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
  writeLastRowFirst,
} from "../../../test/helpers/stats_traffic.ts";

const SITE = "engine";
const DAY_MS = 86_400_000;
/** Now, for the builder: every day of the traffic has ended. */
const NOW = TRAFFIC_TO + 2 * DAY_MS;
const MONTH: Json = ["2026-10-01", "2026-10-31"];

const QUERIES: Record<string, Json>[] = [
  TRAFFIC_QUERY,
  { metrics: ["visitors", "visits", "pageviews"], dimensions: ["time:month"] },
  { metrics: ["visitors", "bounce_rate", "visit_duration", "views_per_visit"] },
  { metrics: ["pageviews", "visitors", "views_per_visit"], dimensions: ["time:hour"] },
  { metrics: ["pageviews", "events", "leads", "revenue"], dimensions: ["time:week"] },
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
    metrics: ["pageviews", "visitors", "visits"],
    dimensions: ["time:day"],
    filters: [["contains", "visit:entry_page", ["BLOG"]]],
  },
  // Exit pages depend on the range: visits crossing its end count under their last page in it.
  {
    metrics: ["visits", "visitors", "pageviews", "bounce_rate", "events"],
    dimensions: ["visit:exit_page"],
  },
  {
    metrics: ["visitors", "pageviews", "visits"],
    dimensions: ["time:day", "visit:exit_page"],
    filters: [["is_not", "visit:exit_page", ["/"]]],
  },
  { metrics: ["visits", "visitors", "revenue"], dimensions: ["visit:referrer"] },
  { metrics: ["visits", "visitors"], dimensions: ["visit:screen", "time:week"] },
  {
    metrics: TRAFFIC_QUERY.metrics,
    dimensions: ["visit:source"],
    filters: [["is", "visit:country", ["DE", "NP"]]],
  },
  { metrics: ["events", "revenue"], dimensions: ["event:name", "time:day"] },
  { metrics: ["events", "revenue", "visitors"], filters: [["is", "event:name", ["purchase"]]] },
  { metrics: ["revenue", "visitors", "visit_duration"], dimensions: ["time:day"] },
  { metrics: ["conversion_rate"], filters: [["is", "event:name", ["purchase"]]] },
  {
    metrics: ["conversion_rate", "events"],
    dimensions: ["time:week"],
    filters: [["contains", "event:name", ["UP"]], ["is_not", "event:name", ["download"]]],
  },
  { metrics: ["visits", "events", "leads", "revenue"], dimensions: ["visit:source"] },
  {
    metrics: ["revenue", "visits"],
    dimensions: ["time:day", "visit:channel"],
    filters: [["is_not", "visit:channel", ["direct"]]],
  },
  { metrics: ["visits", "events"], filters: [["contains", "visit:ad_link", [""]]] },
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
    metrics: ["events", "visitors", "revenue"],
    dimensions: ["event:props:plan"],
    filters: [["is", "event:name", ["purchase", "signup"]]],
  },
  {
    metrics: ["events", "pageviews"],
    dimensions: ["event:props:seats", "time:month"],
  },
  { metrics: ["visits", "visitors"], filters: [["is", "event:props:ok", ["true"]]] },
  { metrics: ["events"], dimensions: ["event:name", "event:props:plan"] },
  {
    metrics: ["conversion_rate", "visitors", "revenue"],
    dimensions: ["time:day", "event:page"],
    filters: [["is", "event:name", ["purchase"]]],
    include: { bots: true },
  },
  // Rows by exit page without a visit metric: still their visit's exit page in the range.
  { metrics: ["pageviews", "visitors"], dimensions: ["visit:exit_page"] },
];

/** Per zone, the ranges worth asking: a month, and its daylight-saving day or a few days. */
const RANGES: Record<string, { month: Json; short?: Json }> = {
  "UTC": { month: MONTH },
  "Asia/Kathmandu": { month: MONTH, short: ["2026-10-10", "2026-10-12"] },
  "America/New_York": { month: MONTH, short: ["2026-11-01", "2026-11-01"] }, // 25 hours
  "Australia/Sydney": { month: MONTH, short: ["2026-10-04", "2026-10-04"] }, // 23 hours
};

/**
 * The queries asked again after each change to the rows: one of each way and
 * of each kind of correction (visits crossing the range's ends, exit pages,
 * mixed rollups and rows, properties, conversions).
 */
const AFTER_CHANGES = [0, 2, 5, 9, 10, 13, 17, 21, 25, 27, 31];
if (AFTER_CHANGES.some((i) => QUERIES[i] === undefined)) {
  throw new Error("a query of AFTER_CHANGES is missing");
}

const indices = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * The questions of the first test: storage, zone, range, rollups built or not
 * and query, all pairs of them (test/helpers/pairwise.ts) instead of every
 * combination, so each query meets each zone, each range, each storage and
 * both states of the rollups.
 */
const ZONE_PLAN = allPairs(
  {
    storage: SYSTEM_STORAGES,
    zone: TEST_ZONES,
    range: ["month", "short"],
    rollups: ["without", "with"],
    query: indices(QUERIES.length),
  },
  (row) => row.zone === undefined || row.range !== "short" || RANGES[row.zone].short !== undefined,
);

/**
 * The checks after the later changes to the rows (more late rows, a deletion,
 * retention): all pairs too. The first, after two days' late rows, asks every
 * query of AFTER_CHANGES over the month on every storage: the month's rollups
 * beside stale days.
 */
const CHANGE_PLAN = allPairs({
  storage: SYSTEM_STORAGES,
  change: [1, 2, 3, 4, 5],
  range: ["month", "short"],
  query: AFTER_CHANGES,
});
const LATE_DAYS: Question[] = AFTER_CHANGES.map((query) => ({ range: "month", query }));
/** After the rebuild, every query in both ranges, each on one storage or the other. */
const REBUILT_PLAN = allPairs({
  storage: SYSTEM_STORAGES,
  range: ["month", "short"],
  query: indices(QUERIES.length),
});

interface Question {
  range: string;
  query: number;
}

/**
 * The questions asked in a zone: engine == reference; answers how many took
 * each way. The reference's answers are kept in `known` while the rows do not
 * change (the rollups do not change them).
 */
async function compareAll(
  db: Database,
  zone: string,
  questions: Question[],
  known?: Map<string, unknown>,
): Promise<Record<string, number>> {
  await setZone(db, SITE, zone);
  const used: Record<string, number> = {};
  for (const { range, query } of questions) {
    const date_range = RANGES[zone][range as "month" | "short"]!;
    const body = QUERIES[query];
    const label = `${JSON.stringify(body)} ${zone} ${date_range}`;
    const { path, engine, reference } = await answersOf(
      db,
      SITE,
      { ...body, date_range },
      zone,
      { totals: true, reference: known?.get(label) as Finished | undefined },
    );
    known?.set(label, reference);
    used[path] = (used[path] ?? 0) + 1;
    expect(engine, label).toEqual(reference);
  }
  return used;
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [path, n] of Object.entries(from)) into[path] = (into[path] ?? 0) + n;
}

async function build(db: Database): Promise<number> {
  return (await buildRollups(db, (await rollupSite(db, SITE))!, NOW)).built;
}

describe.each(SYSTEM_STORAGES)("the engine on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: TRAFFIC_FROM,
      toMs: TRAFFIC_TO,
      pageViews: 1200,
      eventsPerView: 0.3,
      seed: 7,
    });
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it("answers every query as the stored rows do, with and without rollups", async () => {
    const known = new Map<string, unknown>();
    const mine = ZONE_PLAN.filter((row) => row.storage === storage);
    const before: Record<string, number> = {};
    const after: Record<string, number> = {};
    for (const zone of TEST_ZONES) {
      await db.exec("delete from ingest.rollup_periods");
      const asked = (rollups: string) =>
        mine.filter((row) => row.zone === zone && row.rollups === rollups);
      const without = await compareAll(db, zone, asked("without"), known);
      expect(without.rollups, zone).toBeUndefined();
      add(before, without);
      expect(await build(db)).toBeGreaterThan(30);
      add(after, await compareAll(db, zone, asked("with"), known));
    }
    // A range of a few days is worked out from the rows as rollups would hold them.
    expect(before["rollups and rows"]).toBeGreaterThan(0);
    expect(after.rollups).toBeGreaterThan(5);
    await setZone(db, SITE, "UTC");
    await build(db);
    const sample = await answersOf(db, SITE, { ...TRAFFIC_QUERY, date_range: MONTH }, "UTC", {});
    expect(sample.path).toBe("rollups");
    expect(sample.reference.rows.length).toBeGreaterThan(50);
    const byPlan = await answersOf(db, SITE, { ...QUERIES[27], date_range: MONTH }, "UTC", {});
    expect(byPlan.reference.rows.length).toBeGreaterThan(3); // free, pro, team, none
  }, 600_000);

  it("stays equal after late rows, a deletion, retention and the rebuild", async () => {
    const zone = "Asia/Kathmandu";
    const afterChange = (change: number) =>
      CHANGE_PLAN.filter((row) => row.storage === storage && row.change === change);
    await setZone(db, SITE, zone);
    await build(db);
    // Two days' late visits, each written last row first: those days' rollups go stale and
    // are worked out from the rows beside the others; the month's too.
    await writeLastRowFirst(db, {
      ...lateTraffic(SITE),
      fromMs: Date.parse("2026-10-14T00:00:00Z"),
      toMs: Date.parse("2026-10-16T00:00:00Z"),
      pageViews: 40,
    });
    const used = await compareAll(db, zone, LATE_DAYS);
    expect(used["rollups and rows"]).toBeGreaterThan(5);
    // More late days than the engine works out from the rows: ingest.visits answers.
    await writeLastRowFirst(db, lateTraffic(SITE));
    expect((await compareAll(db, zone, afterChange(1))).rollups).toBeUndefined();
    await build(db);
    await compareAll(db, zone, afterChange(2));

    await deleteVisitor(db, {
      siteId: SITE,
      visitorId: await busiestVisitor(db, SITE),
      withLeads: true,
    });
    await compareAll(db, zone, afterChange(3));
    await build(db);
    await compareAll(db, zone, afterChange(4));

    // 40 days before 2026-11-20T10:07Z: a cutoff of 2026-10-11T10:07Z, inside a day.
    await runRetention(db, {
      partitions: new Partitions(db),
      retentionDays: 40,
      now: Date.parse("2026-11-20T10:07:00Z"),
    });
    await compareAll(db, zone, afterChange(5));
    await build(db);

    const rebuilt = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(rebuilt[0]).toMatchObject({ added: 0, removed: 0, changed: 0 });
    await compareAll(db, zone, REBUILT_PLAN.filter((row) => row.storage === storage));
  }, 600_000);

  it("compares periods, lists time labels and counts funnels as the stored rows do", async () => {
    await setZone(db, SITE, "America/New_York");
    await build(db);
    const store = new IngestStore(db);
    const answerer = (engine: ReturnType<typeof statsEngine>) =>
      new StatsAnswerer({ engine, site: (id) => store.statsSite(id), now: () => NOW });
    const fast = answerer(statsEngine(db));
    const rows = answerer(referenceEngine(db));
    const queries: Record<string, Json>[] = ([
      { ...TRAFFIC_QUERY, date_range: ["2026-10-20", "2026-11-02"] },
      { metrics: ["visitors", "pageviews", "revenue"], dimensions: ["time:week"] },
      { metrics: ["visits", "bounce_rate"], dimensions: ["visit:exit_page", "time:day"] },
      { metrics: ["events", "visitors"], dimensions: ["event:props:plan", "time:day"] },
    ] as Record<string, Json>[]).map((q) => ({ date_range: MONTH, ...q }));
    let compared = 0;
    for (const query of queries) {
      for (const compare of ["previous_period", ["2026-09-28", "2026-10-06"]] as Json[]) {
        const body = {
          ...query,
          include: { compare, totals: true, time_labels: true },
          limit: 10_000,
        };
        const a = await fast.query(SITE, queryBodyOf(body));
        const b = await rows.query(SITE, queryBodyOf(body));
        expect(a.answer, JSON.stringify(body)).toEqual(b.answer);
        expect(a.compared, JSON.stringify(body)).toEqual(b.compared);
        expect(a.timeLabels).toEqual(b.timeLabels);
        compared += a.compared!.rows.filter((c) => c !== null && c.metrics[0] !== 0).length;
      }
    }
    // The comparisons compared something: rows with data on both sides.
    expect(compared).toBeGreaterThan(20);
    const funnels: Record<string, Json>[] = [
      { steps: [{ page: "/" }, { page: "/pricing" }, { event: "signup" }, { event: "purchase" }] },
      { steps: [{ page: "/blog*" }, { lead: true }], include: { bots: true } },
      {
        steps: [{ page: "/*" }, { event: "purchase" }],
        filters: [["is_not", "visit:channel", ["direct"]], ["contains", "visit:exit_page", ["/"]]],
      },
    ];
    for (const funnel of funnels) {
      const body = funnelBodyOf({ date_range: MONTH, ...funnel });
      const a = await fast.funnel(SITE, body);
      const b = await rows.funnel(SITE, body);
      expect(a.steps, JSON.stringify(funnel)).toEqual(b.steps);
      expect(Number(a.steps[1].visitors)).toBeGreaterThan(0);
    }
  }, 300_000);

  it("keeps a visit's attributes from its first page view and its exit from its last", async () => {
    // A visit written last row first: each earlier page view takes the attributes over.
    const views = [...generateVisits({ ...lateTraffic(SITE), idPrefix: "order", pageViews: 30 })]
      .flat().flatMap((item) => item.kind === "view" ? [item] : [])
      .filter((item) => item.row.session_id !== null);
    const longest = views.reduce((best, v) => {
      const n = views.filter((w) => w.row.session_id === v.row.session_id).length;
      return n > best.n ? { session: v.row.session_id!, n } : best;
    }, { session: "", n: 0 });
    const own = views.filter((v) => v.row.session_id === longest.session)
      .sort((a, b) => Date.parse(b.row.received_at) - Date.parse(a.row.received_at));
    expect(own.length).toBeGreaterThan(2);
    const session = longest.session;
    for (const item of own) {
      await db.transaction((tx) => writeGroup(tx, [item], { endsTransaction: true }));
    }
    const [visit] = await db.query<{ entry_page: string; exit_page: string; pageviews: number }>(
      "select entry_page, exit_page, pageviews from ingest.visits where site_id = $1 and visit_key = $2",
      [SITE, `s${session}`],
    );
    const path = (url: string) => new URL(url).pathname;
    expect(visit).toEqual({
      entry_page: path(own.at(-1)!.row.url),
      exit_page: path(own[0].row.url),
      pageviews: own.length,
    });
  });
});
