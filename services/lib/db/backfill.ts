/**
 * Backfills: the long part of an expand step, run by the services in the
 * background instead of in a migration. A migration adds the new shape (a
 * nullable column, a new table) in a moment; the code of the same release
 * writes both shapes; a backfill then fills the new shape from the old rows
 * batch by batch, each batch a short transaction of its own, while the
 * service serves. A later release, once the backfill is done everywhere,
 * may read only the new shape and contract the old one.
 *
 * Progress is kept in the schema's `backfills` table (made by the migration
 * runner) in the same transaction as each batch's work, so a backfill
 * stopped anywhere (a rollout, a crash) goes on where it stopped, and no
 * batch is done twice. Every replica runs the runner; the row lock of a
 * backfill's progress lets one replica work on it at a time, and another
 * takes over when that one stops. Its progress is the gauge
 * `crm.backfill.progress` and `deno task admin migrate status`.
 */
import type { Clock } from "../clock.ts";
import type { Database, Queryable } from "./mod.ts";
import { lockNotGranted, MIGRATE_DEFAULTS, schemaVersion } from "./migrate.ts";
import { gaugeOverInstances } from "../telemetry.ts";

export interface BackfillBatch {
  /** Rows this batch filled. */
  rows: number;
  /** Where the next batch starts; undefined when nothing is left. */
  next: string | undefined;
}

export interface Backfill {
  /** Unique in its schema: lower case letters, digits and _. */
  name: string;
  /** The schema version whose migration made the shape it fills: it waits for it. */
  since: number;
  /** Rows left to fill in all, read once at the start (the progress's denominator). */
  count(q: Queryable): Promise<number>;
  /**
   * Fills at most `size` rows from `cursor` on (undefined: the start), in
   * the caller's transaction. Rows written by the new code meanwhile need
   * nothing: a batch fills only what is still empty.
   */
  batch(q: Queryable, cursor: string | undefined, size: number): Promise<BackfillBatch>;
}

/** A backfill's progress as stored. */
export interface BackfillState {
  schema: string;
  name: string;
  doneRows: number;
  /** Undefined until the first batch counted them. */
  totalRows: number | undefined;
  startedAt: string | undefined;
  updatedAt: string | undefined;
  finishedAt: string | undefined;
}

const iso = (value: unknown) => value == null ? undefined : new Date(value as string).toISOString();

/** Every backfill's stored progress in the schema, by name; empty before migrate made the table. */
export async function backfillStates(db: Queryable, schema: string): Promise<BackfillState[]> {
  const [table] = await db.query<{ found: boolean }>(
    "select to_regclass($1) is not null as found",
    [`${schema}.backfills`],
  );
  if (!table?.found) return [];
  const rows = await db.query<Record<string, unknown>>(
    `select name, done_rows::float8 as done, total_rows::float8 as total,
            started_at, updated_at, finished_at
       from ${schema}.backfills order by name`,
  );
  return rows.map((row) => ({
    schema,
    name: row.name as string,
    doneRows: Number(row.done),
    totalRows: row.total == null ? undefined : Number(row.total),
    startedAt: iso(row.started_at),
    updatedAt: iso(row.updated_at),
    finishedAt: iso(row.finished_at),
  }));
}

/** Done rows over all rows, 1 once finished, 0 before the count. */
export function progressOf(state: BackfillState): number {
  if (state.finishedAt) return 1;
  if (!state.totalRows) return 0;
  return Math.min(1, state.doneRows / state.totalRows);
}

/**
 * One batch of the backfill, with its progress, in one transaction; the
 * state after it, or "busy" while another replica holds it.
 */
export async function backfillBatch(
  db: Database,
  schema: string,
  backfill: Backfill,
  options: { size: number; now: number; lockTimeoutMs?: number },
): Promise<BackfillState | "busy"> {
  await db.query(
    `insert into ${schema}.backfills (name) values ($1) on conflict (name) do nothing`,
    [backfill.name],
  );
  const now = new Date(options.now).toISOString();
  const done = await db.transaction(async (tx) => {
    const timeout = options.lockTimeoutMs ?? MIGRATE_DEFAULTS.lockTimeoutMs;
    await tx.exec(`set local lock_timeout = ${Math.max(1, Math.floor(timeout))}`);
    const [row] = await tx.query<
      { cursor: string | null; total: number | null; finished: boolean }
    >(
      `select cursor, total_rows::float8 as total, finished_at is not null as finished
         from ${schema}.backfills where name = $1 for update skip locked`,
      [backfill.name],
    );
    if (!row) return false;
    if (row.finished) return true;
    const total = row.total ?? await backfill.count(tx);
    const batch = await backfill.batch(tx, row.cursor ?? undefined, options.size);
    await tx.query(
      `update ${schema}.backfills
          set cursor = $2, done_rows = done_rows + $3, total_rows = $4,
              started_at = coalesce(started_at, $5::timestamptz), updated_at = $5::timestamptz,
              finished_at = case when $2::text is null then $5::timestamptz end
        where name = $1`,
      [backfill.name, batch.next ?? null, batch.rows, total, now],
    );
    return true;
  });
  if (!done) return "busy";
  const state = (await backfillStates(db, schema)).find((s) => s.name === backfill.name);
  if (!state) throw new Error(`backfill ${schema}.${backfill.name} lost its progress`);
  return state;
}

/** The progress this process last saw of one backfill, for the gauge. */
interface Seen {
  state: BackfillState;
}

const progress = gaugeOverInstances<Seen>("crm.backfill.progress", {
  description: "Share of a background backfill's rows done (1: finished)",
  unit: "1",
  value: (seen) => progressOf(seen.state),
  pick: "highest",
  attributes: (seen) => ({ "crm.backfill.name": `${seen.state.schema}.${seen.state.name}` }),
});

export interface BackfillRunnerOptions {
  clock: Clock;
  /** Rows a batch fills. */
  batchSize?: number;
  /** The pause between two batches, so a backfill never takes the storage from the traffic. */
  pauseMs?: number;
  /** The pause after a failed batch or while another replica holds the backfill. */
  retryMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told of failed batches (the service logs them). */
  onError?: (backfill: string, error: unknown) => void;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/**
 * Runs a schema's backfills in order, batch after batch, until each is
 * finished or the signal stops it. It never throws: a failed batch (a lock
 * not granted, storage away) is reported and tried again after a pause.
 */
export async function runBackfills(
  db: Database,
  schema: string,
  backfills: readonly Backfill[],
  signal: AbortSignal,
  options: BackfillRunnerOptions,
): Promise<void> {
  const sleep = options.sleep ?? sleepFor;
  const retryMs = options.retryMs ?? 10_000;
  const seen: Seen[] = [];
  try {
    for (const backfill of backfills) {
      const mine: Seen = {
        state: {
          schema,
          name: backfill.name,
          doneRows: 0,
          totalRows: undefined,
          startedAt: undefined,
          updatedAt: undefined,
          finishedAt: undefined,
        },
      };
      seen.push(mine);
      progress.add(mine);
      while (!signal.aborted) {
        try {
          if (await schemaVersion(db, schema) < backfill.since) {
            await sleep(retryMs, signal);
            continue;
          }
          const state = await backfillBatch(db, schema, backfill, {
            size: options.batchSize ?? 1_000,
            now: options.clock.now(),
          });
          if (state === "busy") {
            // Another replica works on it: its progress as stored, and a look again later.
            const stored = (await backfillStates(db, schema)).find((s) => s.name === backfill.name);
            if (stored) mine.state = stored;
            await sleep(retryMs, signal);
            continue;
          }
          mine.state = state;
          if (state.finishedAt) break;
          await sleep(options.pauseMs ?? 100, signal);
        } catch (error) {
          if (!lockNotGranted(error)) options.onError?.(`${schema}.${backfill.name}`, error);
          await sleep(retryMs, signal);
        }
      }
    }
  } finally {
    // A finished backfill stays reported at 1 while the process runs; a stopped runner reports none.
    if (signal.aborted) { for (const s of seen) progress.remove(s); }
  }
}
