/**
 * `deno task bench retention`: retention over a large table. Rows are
 * generated straight in Postgres (generate_series) over 14 months, with an
 * idempotency id for every event, then the retention job runs as
 * ingest-service runs it: once (a month of partitions to drop, a boundary
 * month to trim) and once more a day later (the daily steady state).
 */
import type { BenchReport } from "./main.ts";
import { DATABASE_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { ingestMigrations } from "../../services/ingest/migrations/mod.ts";
import { Partitions } from "../../services/ingest/partitions.ts";
import { runRetention } from "../../services/ingest/retention.ts";

const ROWS = Number(Deno.env.get("BENCH_RETENTION_ROWS") ?? 3_000_000);
const DAY = 86_400_000;
const SPAN_DAYS = 425;

export async function run(): Promise<BenchReport> {
  const report: BenchReport = {
    name: "retention",
    description:
      `${ROWS} events and ${ROWS} page views spread evenly over ${SPAN_DAYS} days (plus an id per event), then \`retention run\` with RETENTION_DAYS=395.`,
    rows: [],
    notes: [],
  };
  if (!DATABASE_URL) {
    report.notes!.push("needs DATABASE_URL (a Postgres server); nothing measured");
    return report;
  }
  const fresh = await freshPostgresUrl();
  const db = await openPostgres(fresh.url, { poolSize: 2 });
  try {
    await migrate(db, "ingest", ingestMigrations);
    const now = Date.now();
    const first = now - SPAN_DAYS * DAY;
    const partitions = new Partitions(db);
    const months: number[] = [];
    for (let t = first; t <= now + 31 * DAY; t += 27 * DAY) months.push(t);
    await partitions.ensure(months);
    const started = performance.now();
    const step = (SPAN_DAYS * DAY) / ROWS;
    await db.query(
      `insert into ingest.events (site_id, received_at, name, event_id, visitor_id, params, source)
       select 'demo', to_timestamp(($1::float8 + g * $2::float8) / 1000), 'purchase', 'e' || g,
              'v' || (g % 100000), '{"quantity":1}', 'server'
         from generate_series(0, $3::int - 1) g`,
      [first, step, ROWS],
    );
    await db.query(
      `insert into ingest.event_ids (site_id, event_id, received_at)
       select 'demo', 'e' || g, to_timestamp(($1::float8 + g * $2::float8) / 1000)
         from generate_series(0, $3::int - 1) g`,
      [first, step, ROWS],
    );
    await db.query(
      `insert into ingest.page_views (site_id, received_at, visitor_id, url, click_ids, ad_cookies, bot)
       select 'demo', to_timestamp(($1::float8 + g * $2::float8) / 1000), 'v' || (g % 100000),
              'https://demo.example/p' || (g % 500), '{}', '{}', false
         from generate_series(0, $3::int - 1) g`,
      [first, step, ROWS],
    );
    await db.exec("analyze");
    const loadSeconds = (performance.now() - started) / 1000;
    const [{ size }] = await db.query<{ size: string }>(
      "select pg_size_pretty(pg_database_size(current_database())) as size",
    );
    for (const [label, at] of [["first run", now], ["a day later", now + DAY]] as const) {
      const r = await runRetention(db, { partitions, retentionDays: 395, now: at });
      report.rows.push({
        run: label,
        "partitions dropped": r.droppedPartitions.length,
        "rows deleted one by one": Object.values(r.deletedRows).reduce((a, b) => a + b, 0),
        "events trimmed": r.deletedRows.events,
        "event ids deleted": r.deletedRows.eventIds,
        "ms": r.elapsedMs,
      });
    }
    const [{ left }] = await db.query<{ left: number }>(
      "select count(*)::int as left from ingest.events",
    );
    report.notes!.push(
      `loaded ${3 * ROWS} rows (${size}) in ${Math.round(loadSeconds)} s; ${left} events left`,
      "dropping a partition is a catalogue change: its time does not grow with the rows in it",
      "the row-by-row part is the month the cutoff falls in plus the event ids; run daily it is about one day of rows",
    );
  } finally {
    await db.close();
    await fresh.drop();
  }
  return report;
}
