/**
 * Retention: page views and events older than RETENTION_DAYS go; leads stay.
 * Months entirely before the cutoff are dropped as whole partitions (a
 * catalogue change, as fast for a billion rows as for one); only the
 * partition the cutoff falls in is deleted from row by row, and when the job
 * runs daily that is about one day of rows. Visitor profiles, sessions and
 * event ids past the cutoff are deleted in batches. The reports' derived
 * tables are then put in line with the rows left (stats/visits.ts).
 */
import type { Database } from "../lib/db/mod.ts";
import { listPartitions, type Partitions } from "./partitions.ts";
import { afterRetention } from "./stats/visits.ts";

export interface RetentionReport {
  retentionDays: number;
  cutoffMs: number;
  droppedPartitions: string[];
  deletedRows: Record<string, number>;
  elapsedMs: number;
}

const DAY_MS = 86_400_000;
const BATCH = 50_000;

/** Deletes rows matching `where` from `table` in batches of BATCH; returns how many. */
async function deleteInBatches(
  db: Database,
  { table, where, cutoff }: { table: string; where: string; cutoff: string },
): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.query<{ deleted: number }>(
      `with gone as (
         delete from ${table} where ctid in (select ctid from ${table} where ${where} limit ${BATCH})
         returning 1)
       select count(*)::int as deleted from gone`,
      [cutoff],
    );
    total += row.deleted;
    if (row.deleted < BATCH) return total;
  }
}

export interface RetentionRun {
  partitions: Partitions;
  /** Rows older than this many days before `now` go. */
  retentionDays: number;
  /** The clock's time of the run, in ms. */
  now: number;
}

export async function runRetention(
  db: Database,
  { partitions, retentionDays, now }: RetentionRun,
): Promise<RetentionReport> {
  const started = performance.now();
  const cutoffMs = now - retentionDays * DAY_MS;
  const cutoff = new Date(cutoffMs).toISOString();
  const dropped: string[] = [];
  const deleted: Record<string, number> = {};
  const add = (table: string, n: number) => (deleted[table] = (deleted[table] ?? 0) + n);

  for (const partition of await listPartitions(db)) {
    if (partition.to <= cutoffMs) {
      await db.transaction(async (tx) => {
        // Never queue behind a long reader for long: inserts would queue behind the drop.
        await tx.exec("set local lock_timeout = '10s'");
        await tx.exec(`drop table if exists ingest.${partition.name}`);
      });
      dropped.push(partition.name);
    } else if (partition.from < cutoffMs) {
      add(
        partition.table,
        await deleteInBatches(db, {
          table: `ingest.${partition.name}`,
          where: "received_at < $1",
          cutoff,
        }),
      );
    }
  }
  const olderThan = (table: string, column: string) =>
    deleteInBatches(db, { table, where: `${column} < $1`, cutoff });
  add("eventIds", await olderThan("ingest.event_ids", "received_at"));
  add("sessions", await olderThan("ingest.sessions", "started_at"));
  add("visitors", await olderThan("ingest.visitors", "last_seen"));
  // The reports' derived tables follow the rows in one transaction (reports read in between
  // may still count rows already gone).
  await db.transaction((tx) => afterRetention(tx, cutoff));
  partitions.forget();
  await partitions.ensureAhead(now);
  return {
    retentionDays,
    cutoffMs,
    droppedPartitions: dropped,
    deletedRows: {
      pageViews: deleted.page_views ?? 0,
      events: deleted.events ?? 0,
      eventIds: deleted.eventIds,
      sessions: deleted.sessions,
      visitors: deleted.visitors,
    },
    elapsedMs: Math.round(performance.now() - started),
  };
}
