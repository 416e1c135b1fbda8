/**
 * For the tests that compare the engine's answers with the stored rows: a
 * fresh database holding generated traffic written through the writer (its
 * site known with a zone and the traffic's event types), and a query
 * answered both by the engine and by the reference engine.
 */
import { type FreshDatabase, freshDatabase } from "./storage.ts";
import type { StorageKind } from "./env.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import type { Json } from "../../services/lib/stats/wire.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../../services/ingest/migrations/mod.ts";
import { Partitions } from "../../services/ingest/partitions.ts";
import type { WriteItem } from "../../services/ingest/rows.ts";
import { writeGroup } from "../../services/ingest/writer.ts";
import { pathOf, statsEngine } from "../../services/ingest/stats/engine.ts";
import { finish } from "../../services/ingest/stats/finish.ts";
import {
  generateVisits,
  inGroups,
  TRAFFIC_EVENT_TYPES,
  type TrafficOptions,
} from "./generated_traffic.ts";
import { parseQuery } from "../../services/ingest/stats/query.ts";
import { referenceEngine, referencePartials } from "../../services/ingest/stats/reference.ts";
import { planQuery } from "../../services/ingest/stats/service.ts";
import { daysOf } from "../../services/ingest/stats/ranges.ts";

const DAY_MS = 86_400_000;

/** The tests' traffic span: around the end of daylight-saving time in New York (2026-11-01) and its start in Sydney (2026-10-04). */
export const TRAFFIC_FROM = Date.parse("2026-09-28T00:00:00Z");
export const TRAFFIC_TO = Date.parse("2026-11-05T00:00:00Z");
/** UTC, a 45-minute offset, and a daylight-saving change each way inside the span. */
export const TEST_ZONES = ["UTC", "Asia/Kathmandu", "America/New_York", "Australia/Sydney"];
/** The Traffic report: days by channel. */
export const TRAFFIC_QUERY: Record<string, Json> = {
  metrics: ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"],
  dimensions: ["time:day", "visit:channel"],
};
/** The day the tests' relative presets would count from (they use none). */

/**
 * A fresh, migrated database with the traffic written in groups of 60 items
 * (each visit first passed through `reshape`, when given), partitions made
 * for the months it spans.
 */
export async function databaseWithTraffic(
  storage: StorageKind,
  traffic: TrafficOptions,
  reshape: (visit: WriteItem[], index: number) => WriteItem[] = (visit) => visit,
): Promise<FreshDatabase> {
  const fresh = await freshDatabase(storage, { migrated: true });
  const { db } = fresh;
  await migrate(db, INGEST_SCHEMA, ingestMigrations);
  const months = [];
  for (let at = traffic.fromMs; at < traffic.toMs + 31 * DAY_MS; at += 28 * DAY_MS) {
    months.push(at);
  }
  await new Partitions(db).ensure(months);
  await db.query("insert into ingest.sites (site_id, time_zone) values ($1, 'UTC')", [
    traffic.siteId,
  ]);
  for (const [position, type] of TRAFFIC_EVENT_TYPES.entries()) {
    await db.query(
      `insert into ingest.event_types (site_id, name, title, description, status, params,
              brings_revenue, currency, position)
       values ($1, $2, $2, '', 'active', $3::json, $4, null, $5)`,
      [traffic.siteId, type.name, JSON.stringify(type.params), type.name === "purchase", position],
    );
  }
  const visits = [...generateVisits(traffic)].map(reshape);
  for (const group of inGroups(visits, 60)) {
    // As ingest-service's group commit writes (its last statement with COMMIT behind it).
    await db.transaction((tx) => writeGroup(tx, group, { endsTransaction: true }));
  }
  return fresh;
}

/** The site's zone (what its rollups are built in). */
export async function setZone(db: Database, siteId: string, zone: string): Promise<void> {
  await db.query("update ingest.sites set time_zone = $2 where site_id = $1", [siteId, zone]);
}

export type Finished = ReturnType<typeof finish>;

/**
 * A query of a site in its zone, answered as the service would (with the
 * way the engine takes) and by the reference engine (or the reference's
 * answer given). `totals` sets include.totals when given.
 */
export async function answersOf(
  db: Database,
  siteId: string,
  body: Record<string, Json>,
  zone: string,
  options: { totals?: boolean; reference?: Finished } = {},
) {
  const { totals } = options;
  const query = parseQuery(
    { limit: 10_000, ...(totals === undefined ? {} : { include: { totals } }), ...body },
    { paramKeys: new Set(TRAFFIC_EVENT_TYPES.flatMap((t) => t.params.map((p) => p.key))) },
  );
  const days = daysOf(query.dateRange, zone);
  const plan = await planQuery(referenceEngine(db), siteId, query, zone, days);
  return {
    path: await pathOf(db, plan),
    engine: finish(query, await statsEngine(db).partials(plan)),
    reference: options.reference ?? finish(query, await referencePartials(db, plan)),
  };
}

/** Late visits over three weeks inside the traffic's span (session ids start "late"). */
export const lateTraffic = (siteId: string): TrafficOptions => ({
  siteId,
  fromMs: Date.parse("2026-10-05T00:00:00Z"),
  toMs: Date.parse("2026-10-25T00:00:00Z"),
  pageViews: 200,
  eventsPerView: 0.3,
  seed: 12,
  idPrefix: "late",
});

/**
 * Writes the traffic's visits each last row first, one row per transaction:
 * every earlier page view then changes its visit's entry page (and source)
 * after the visit was stored, and the last one its exit page.
 */
export async function writeLastRowFirst(db: Database, traffic: TrafficOptions): Promise<void> {
  for (const items of generateVisits(traffic)) {
    const rows = [...items].sort((a, b) =>
      Date.parse(b.row.received_at) - Date.parse(a.row.received_at)
    );
    for (const item of rows) {
      await db.transaction((tx) => writeGroup(tx, [item], { endsTransaction: true }));
    }
  }
}

/** The visitor with the most page views of a site. */
export async function busiestVisitor(db: Database, siteId: string): Promise<string> {
  const [row] = await db.query<{ visitor_id: string }>(
    `select visitor_id from ingest.page_views where site_id = $1 and visitor_id is not null
      group by visitor_id order by count(*) desc limit 1`,
    [siteId],
  );
  return row.visitor_id;
}

/** How many rows of a table of the ingest schema a site has. */
export async function siteRows(db: Database, table: string, siteId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from ingest.${table} where site_id = $1`,
    [siteId],
  );
  return row.n;
}
