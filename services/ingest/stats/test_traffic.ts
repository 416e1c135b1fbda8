/**
 * For the tests that compare an engine's answers with the stored rows: a
 * fresh database holding generated traffic written through the writer, and a
 * query answered both from the derived tables and by the reference engine.
 */
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import type { StorageKind } from "../../../test/helpers/env.ts";
import { migrate } from "../../lib/db/migrate.ts";
import type { Database } from "../../lib/db/mod.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../migrations.ts";
import { Partitions } from "../partitions.ts";
import type { WriteItem } from "../rows.ts";
import { writeGroup } from "../writer.ts";
import { derivedPartials, derivedPath } from "./derived_engine.ts";
import { finish } from "./finish.ts";
import { generateVisits, inGroups, type TrafficOptions } from "./generated.ts";
import { parseQuery } from "./query.ts";
import { referenceEngine, referencePartials } from "./reference.ts";
import { planQuery } from "./service.ts";
import { daysOf } from "./ranges.ts";

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
  const fresh = await freshDatabase(storage);
  const { db } = fresh;
  await migrate(db, INGEST_SCHEMA, ingestMigrations);
  const months = [];
  for (let at = traffic.fromMs; at < traffic.toMs + 31 * DAY_MS; at += 28 * DAY_MS) {
    months.push(at);
  }
  await new Partitions(db).ensure(months);
  const visits = [...generateVisits(traffic)].map(reshape);
  for (const group of inGroups(visits, 60)) {
    // As ingest-service's group commit writes (its last statement with COMMIT behind it).
    await db.transaction((tx) => writeGroup(tx, group, true, { endsTransaction: true }));
  }
  return fresh;
}

/**
 * A query of a site in a zone, answered as the service would (the path the
 * derived tables take, undefined when only the reference answers) and by
 * the reference engine. `totals` sets include.totals when given.
 */
export async function answersOf(
  db: Database,
  siteId: string,
  body: Record<string, Json>,
  zone: string,
  totals?: boolean,
) {
  const query = parseQuery({
    limit: 10_000,
    ...(totals === undefined ? {} : { include: { totals } }),
    ...body,
  });
  const days = daysOf(query.dateRange, zone);
  const plan = await planQuery(referenceEngine(db), siteId, query, zone, days);
  const derived = await derivedPartials(db, plan);
  return {
    path: derivedPath(plan),
    derived: derived && finish(query, derived),
    reference: finish(query, await referencePartials(db, plan)),
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
 * after slices of later buckets exist, so the writer re-homes them.
 */
export async function writeLastRowFirst(db: Database, traffic: TrafficOptions): Promise<void> {
  for (const items of generateVisits(traffic)) {
    const rows = [...items].sort((a, b) =>
      Date.parse(b.row.received_at) - Date.parse(a.row.received_at)
    );
    for (const item of rows) {
      await db.transaction((tx) => writeGroup(tx, [item], true, { endsTransaction: true }));
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
