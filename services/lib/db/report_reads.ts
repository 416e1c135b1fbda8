/**
 * The reads of reports, funnels, exports, segments and share links: their own
 * connections (REPORT_POOL_SIZE, on DATABASE_READ_URL when set), so the write
 * path never waits for one of them, and a deadline (REPORT_TIMEOUT_MS).
 *
 * `run(fn)` gives fn one read-only transaction that sees one snapshot on one
 * connection: every number of an answer, and everything the engine decides
 * from the freshness of its derived tables, comes from the same moment of the
 * same server (on a replica, the moment it had replayed to). Each statement
 * goes out with Postgres's statement_timeout set to the time left before the
 * deadline, so Postgres itself cancels whatever runs past it; the caller is
 * answered at the deadline even while it still waits for a connection.
 *
 * The embedded store is one connection that cannot cancel a statement: there
 * a report shares the connection with the writes, stops at its next statement
 * once past the deadline, and its caller is answered `timeout` at the
 * deadline while the statement under way runs to its end.
 */
import type { Database, Param, Queryable, QueryOptions, Row } from "./mod.ts";

/** A report, funnel or export page that ran past REPORT_TIMEOUT_MS. */
export class ReportTimeoutError extends Error {
  readonly code = "REPORT_TIMEOUT";
  constructor(readonly timeoutMs: number) {
    super(`the report ran longer than ${timeoutMs} ms`);
  }
}

/** Postgres's query_canceled: here, the statement_timeout set for the deadline. */
const QUERY_CANCELED = "57014";
/**
 * serialization_failure: a read-only repeatable-read transaction meets it
 * only on a hot standby, cancelled by a conflict with the replay of the
 * primary's changes.
 */
const SERIALIZATION_FAILURE = "40001";

/**
 * A report a replica cancelled to replay the primary's changes (a recovery
 * conflict): storage unavailable for the moment (storageUnavailable), so the
 * caller is told 503 and may ask again.
 */
export class ReplayConflictError extends Error {
  readonly code = "REPLAY_CONFLICT";
  constructor(cause: unknown) {
    super("the replica cancelled the report to replay the primary's changes", { cause });
  }
}

/** The databases `run` hands out: already inside one read-only snapshot. */
const inOneSnapshot = new WeakSet<Database>();

export interface ReportReadsOptions {
  /** REPORT_TIMEOUT_MS. */
  timeoutMs: number;
}

export class ReportReads {
  readonly timeoutMs: number;

  constructor(readonly db: Database, options: ReportReadsOptions) {
    this.timeoutMs = options.timeoutMs;
  }

  /**
   * Runs fn in one read-only transaction seeing one snapshot, each of its
   * statements cancelled by Postgres at the deadline; rejects with
   * ReportTimeoutError at the deadline. fn's database runs every query and
   * transaction on that one transaction.
   */
  run<T>(fn: (db: Database) => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.timeoutMs;
    const work = this.db.transaction(async (tx) => {
      await tx.exec("set transaction isolation level repeatable read, read only");
      const bounded = boundedQueryable(tx, {
        deadline,
        timeoutMs: this.timeoutMs,
        kind: this.db.kind,
      });
      return await fn(snapshotDatabase(bounded, this.db.kind));
    });
    return beforeDeadline(work, deadline, this.timeoutMs);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/**
 * Runs fn in one transaction seeing one snapshot: the one a database from
 * ReportReads.run is already in, else a repeatable-read transaction of its own.
 */
export function inSnapshot<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (inOneSnapshot.has(db)) return db.transaction(fn);
  return db.transaction(async (tx) => {
    await tx.exec("set transaction isolation level repeatable read");
    return await fn(tx);
  });
}

function snapshotDatabase(tx: Queryable, kind: Database["kind"]): Database {
  const db: Database = {
    kind,
    query: (text, params, options) => tx.query(text, params, options),
    exec: (script) => tx.exec(script),
    transaction: (fn) => fn(tx),
    close: () => Promise.reject(new Error("a report's snapshot is closed with its run")),
  };
  inOneSnapshot.add(db);
  return db;
}

interface Bound {
  deadline: number;
  timeoutMs: number;
  kind: Database["kind"];
}

/** Statements on tx that may only start before the deadline, and end by it on Postgres. */
function boundedQueryable(tx: Queryable, bound: Bound): Queryable {
  const before = async <T>(run: () => Promise<T>): Promise<T> => {
    const left = Math.ceil(bound.deadline - performance.now());
    if (left <= 0) throw new ReportTimeoutError(bound.timeoutMs);
    if (bound.kind === "postgres") {
      // Local to the transaction; 0 would mean no limit, hence at least 1 ms.
      await tx.query("select set_config('statement_timeout', $1, true)", [String(left)]);
    }
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      if (code === QUERY_CANCELED) throw new ReportTimeoutError(bound.timeoutMs);
      if (code === SERIALIZATION_FAILURE) throw new ReplayConflictError(error);
      throw error;
    }
  };
  return {
    query: <R extends Row>(text: string, params?: readonly Param[], options?: QueryOptions) =>
      before(() => tx.query<R>(text, params, options)),
    exec: (script: string) => before(() => tx.exec(script)),
  };
}

/** The work's outcome, or ReportTimeoutError at the deadline (the work then ends on its own). */
function beforeDeadline<T>(work: Promise<T>, deadline: number, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ReportTimeoutError(timeoutMs)),
      Math.max(0, deadline - performance.now()),
    );
  });
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
