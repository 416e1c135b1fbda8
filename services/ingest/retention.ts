/**
 * Retention: page views and events older than RETENTION_DAYS go; leads stay.
 * Months entirely before the cutoff are dropped as whole partitions (a
 * catalogue change, as fast for a billion rows as for one); only the
 * partition the cutoff falls in is deleted from row by row, and when the job
 * runs daily that is about one day of rows. Visitor profiles, sessions and
 * event ids past the cutoff are deleted in batches. The reports' derived
 * tables are then put in line with the rows left (stats/visits.ts). The
 * time of the last run that succeeded is kept (ingest.upkeep_runs) and
 * exported by every ingest process as crm.ingest.retention.last_success, so
 * a run that stopped happening is seen.
 */
import type { Database, Queryable } from "../lib/db/mod.ts";
import { gaugeOverInstances } from "../lib/telemetry.ts";
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
  add("droppedCounts", await olderThan("ingest.dropped_counts", "at"));
  // The reports' derived tables follow the rows in one transaction (reports read in between
  // may still count rows already gone).
  await db.transaction((tx) => afterRetention(tx, cutoff));
  partitions.forget();
  await partitions.ensureAhead(now);
  await db.query(
    `insert into ingest.upkeep_runs (job, last_success_at) values ('retention', $1::text::timestamptz)
     on conflict (job) do update
       set last_success_at = greatest(upkeep_runs.last_success_at, excluded.last_success_at)`,
    [new Date(now).toISOString()],
  );
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

/** The time (the run's clock, Unix ms) of the last retention run that succeeded; undefined before one. */
export async function lastRetentionSuccess(db: Queryable): Promise<number | undefined> {
  const [row] = await db.query<{ at: number }>(
    `select (extract(epoch from last_success_at) * 1000)::float8 as at
       from ingest.upkeep_runs where job = 'retention'`,
  );
  return row === undefined ? undefined : Number(row.at);
}

/** Retention's last success: the latest any record of this process holds. */
const lastSuccess = gaugeOverInstances<RetentionRecord>("crm.ingest.retention.last_success", {
  description: "When the last retention run that succeeded started (Unix time, of any replica)",
  unit: "s",
  value: (record) => record.lastSuccessMs === undefined ? undefined : record.lastSuccessMs / 1000,
  pick: "highest",
});

/**
 * What the gauge reports: the last success as this process last read it
 * from storage (ingest-service reads it at start and every hour, and
 * notes the runs it makes itself at once).
 */
export class RetentionRecord {
  lastSuccessMs: number | undefined;

  constructor(private readonly db: Queryable) {
    lastSuccess.add(this);
  }

  async refresh(): Promise<void> {
    this.lastSuccessMs = await lastRetentionSuccess(this.db);
  }

  /** A run this process made succeeded (what refresh would read next). */
  succeeded(now: number): void {
    this.lastSuccessMs = Math.max(this.lastSuccessMs ?? now, now);
  }

  close(): void {
    lastSuccess.remove(this);
  }
}
