/**
 * The engine's questions against the stored rows (services/ingest/stats/
 * engine_test.ts and engine_zones_test.ts): one site of generated traffic,
 * the queries, the ranges per zone, and the comparison of the engine's answer
 * with the reference engine's. Two files ask them, so that no one file holds
 * a worker for half a minute at the end of a run.
 */
import { afterAll, beforeAll, expect } from "vitest";
import type { Json } from "../../services/lib/stats/wire.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import { buildRollups, rollupSite } from "../../services/ingest/stats/rollups.ts";
import type { StorageKind } from "./env.ts";
import type { FreshDatabase } from "./storage.ts";
import {
  answersOf,
  databaseWithTraffic,
  type Finished,
  setZone,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
} from "./stats_traffic.ts";

export const SITE = "engine";
const DAY_MS = 86_400_000;
/** Now, for the builder: every day of the traffic has ended. */
export const NOW = TRAFFIC_TO + 2 * DAY_MS;
export const MONTH: Json = ["2026-10-01", "2026-10-31"];

/**
 * The site's traffic on a database of its own (1,200 page views over the
 * traffic's weeks) for the describe block that calls this: made before its
 * tests, dropped after them. Its tests read `db` once it is made.
 */
export function engineDatabase(storage: StorageKind): { readonly db: Database } {
  let fresh: FreshDatabase | undefined;
  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: TRAFFIC_FROM,
      toMs: TRAFFIC_TO,
      pageViews: 1200,
      eventsPerView: 0.3,
      seed: 7,
    });
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });
  return {
    get db() {
      if (!fresh) throw new Error("the engine's database is made before the tests, not yet");
      return fresh.db;
    },
  };
}

export const QUERIES: Record<string, Json>[] = [
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
export const RANGES: Record<string, { month: Json; short?: Json }> = {
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
export const AFTER_CHANGES = [0, 2, 5, 9, 10, 13, 17, 21, 25, 27, 31];
if (AFTER_CHANGES.some((i) => QUERIES[i] === undefined)) {
  throw new Error("a query of AFTER_CHANGES is missing");
}

export const indices = (n: number) => Array.from({ length: n }, (_, i) => i);

export interface Question {
  range: string;
  query: number;
}

/**
 * The questions asked in a zone: engine == reference; answers how many took
 * each way. The reference's answers are kept in `known` while the rows do not
 * change (the rollups do not change them).
 */
export async function compareAll(
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

export function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [path, n] of Object.entries(from)) into[path] = (into[path] ?? 0) + n;
}

/** Builds the site's rollups as the builder would at NOW; how many periods it built. */
export async function build(db: Database): Promise<number> {
  return (await buildRollups(db, (await rollupSite(db, SITE))!, NOW)).built;
}
