/**
 * One small query interface over two implementations: postgres.js against a
 * Postgres server (DATABASE_URL) and PGlite, Postgres compiled to WebAssembly,
 * embedded under CRM_DATA_DIR. Both speak the same SQL dialect, so services
 * write one set of queries and one set of migrations.
 *
 * Conventions that keep the two alike: parameters are strings, numbers,
 * booleans or null (JSON goes in as text with a ::jsonb or ::json cast);
 * 64-bit integers are cast in SQL to what the caller wants to read.
 */

import { TRACING } from "../telemetry.ts";

export type Row = Record<string, unknown>;
export type Param = string | number | boolean | null;

export interface QueryOptions {
  /**
   * Keep the statement parsed and planned on its connection (Postgres: a
   * named prepared statement, one per distinct text and connection, kept as
   * long as the connection lives). For statements of fixed text run often,
   * such as the writer's: planning its upkeep statement again for every batch
   * cost about a third of the Postgres time the upkeep adds. Never for text
   * built per request. The embedded store ignores it.
   */
  prepare?: boolean;
  /**
   * The transaction's last statement: on Postgres its COMMIT goes out right
   * behind it instead of after its answer, a round trip fewer per transaction.
   * A statement after it fails. If it fails, the COMMIT rolls back. The work
   * that follows it in the transaction's function must not fail: it would be
   * reported as failed although committed. Outside a transaction, and on the
   * embedded store, it changes nothing.
   */
  last?: boolean;
}

export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<T extends Row = Row>(
    text: string,
    params?: readonly Param[],
    options?: QueryOptions,
  ): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: "postgres" | "pglite";
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs fn on one connection of its own, outside any transaction: session
   * settings and advisory locks stay with it for fn's statements (migrations
   * that run outside a transaction). fn must undo what it set: the
   * connection goes back to the pool. Absent on stores of one connection
   * (the embedded one), where every statement runs on that connection.
   */
  session?<T>(fn: (connection: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
  /**
   * Connect at once, so a wrong URL fails with a clear message here (the
   * command line); false for the services, which start without Postgres
   * and report NOT_SERVING until it answers.
   */
  checkConnection?: boolean;
  /** The pool's name in its metrics (db.client.connection.pool.name) and Postgres's application_name. */
  poolName?: string;
}

/** Opens Postgres when a URL is given, the embedded PGlite store otherwise. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const poolSize = options.poolSize ?? 10;
  let database: Database;
  if (options.databaseUrl) {
    const { openPostgres } = await import("./postgres.ts");
    database = await openPostgres(options.databaseUrl, {
      poolSize,
      checkConnection: options.checkConnection ?? true,
      applicationName: options.poolName,
    });
  } else {
    const { openPglite } = await import("./pglite.ts");
    database = await openPglite(options.dataDir);
  }
  if (!TRACING) return database;
  const { traced } = await import("./traced.ts");
  return traced(database, { poolSize, poolName: options.poolName ?? "crm" });
}

/** Codes of a connection to the server failing (postgres.js, Node's sockets). */
const CONNECTION_CODES = new Set([
  "STORAGE_TIMEOUT",
  // The server's name does not resolve (yet): a cluster's DNS before its database Service exists.
  "ENOTFOUND",
  "EAI_AGAIN",
  // A replica cancelled a report to replay the primary's changes (report_reads.ts).
  "REPLAY_CONFLICT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/**
 * Whether an error says the database cannot be reached right now (refused,
 * cut, restarting, shutting down) rather than that a statement is wrong: a
 * call failing so is worth retrying, and callers are told UNAVAILABLE
 * instead of an internal error. SQLSTATE class 08 is a connection
 * exception; 57P01-57P03 a server shutting down, crashed or starting;
 * 53300 a server out of connections.
 */
export function storageUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return CONNECTION_CODES.has(code) || code.startsWith("08") ||
    ["57P01", "57P02", "57P03", "53300"].includes(code);
}

/**
 * A write that got no answer from the database within its deadline (see
 * GroupCommit's timeoutMs): the database is taken as unreachable.
 */
export class StorageTimeoutError extends Error {
  readonly code = "STORAGE_TIMEOUT";
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms`);
  }
}

/**
 * Storage work that must answer within `ms`: past it the caller gets a
 * StorageTimeoutError (taken as storage unavailable) while the work, which
 * cannot be cancelled, is left to settle on its own.
 */
export function withStorageDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageTimeoutError(ms)), ms);
  });
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
