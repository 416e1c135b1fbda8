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

export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<T extends Row = Row>(text: string, params?: readonly Param[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: "postgres" | "pglite";
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
}

/** Opens Postgres when a URL is given, the embedded PGlite store otherwise. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const poolSize = options.poolSize ?? 10;
  let database: Database;
  if (options.databaseUrl) {
    const { openPostgres } = await import("./postgres.ts");
    database = await openPostgres(options.databaseUrl, { poolSize });
  } else {
    const { openPglite } = await import("./pglite.ts");
    database = await openPglite(options.dataDir);
  }
  if (!TRACING) return database;
  const { traced } = await import("./traced.ts");
  return traced(database, poolSize);
}
