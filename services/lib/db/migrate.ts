/**
 * Versioned, forward-only migrations, one list per service, each service in
 * its own Postgres schema. Each migration runs on its own: in a transaction
 * of its own (the default), or statement by statement outside any (what
 * CREATE INDEX CONCURRENTLY needs). Either way it holds the schema's advisory
 * lock, so replicas starting at once (or two `admin migrate` runs) apply each
 * migration exactly once and the others wait, then find nothing to do.
 *
 * Migrations run while the previous release serves (the chart's pre-upgrade
 * hook), so no statement may queue the traffic behind it: every statement
 * runs with a lock timeout, and one that does not get its lock in time gives
 * up, letting the writes queued behind it through, and is tried again after
 * a pause, a bounded number of times. Then the run fails with a message
 * saying so, and the hook fails instead of stalling the release's writes.
 */
import type { Database, Queryable } from "./mod.ts";
import { splitStatements } from "./sql_statements.ts";
import { createIndexConcurrently } from "./concurrent_index.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * false: the statements run one at a time outside any transaction, each
   * committed on its own (CREATE INDEX CONCURRENTLY, which a transaction may
   * not hold). A failure leaves the statements before it applied and the
   * migration unrecorded, so the next run starts it again: every statement
   * must be safe to run twice (IF NOT EXISTS; an index a failed concurrent
   * build left invalid is dropped before it is built again).
   */
  transactional?: boolean;
  /**
   * The contract marker: a migration that drops or reshapes what older code
   * uses (a table, a column, a type) names the tagged release from which on
   * no code uses the old shape. Being tagged, that release is older than the
   * one the migration ships in, so while an older release still serves (an
   * upgrade's rollout, a rollback) nothing it reads or writes is gone.
   * services/cli/contract_check.ts checks every migration not yet released.
   */
  contract?: { unusedSince: string };
}

export interface MigrationResult {
  applied: number[];
  current: number;
}

/** How long a statement may wait for its locks, and how often it is tried. */
export interface MigrateOptions {
  /** The longest one statement waits for a lock before it gives up (ms). */
  lockTimeoutMs?: number;
  /** Tries of a statement whose lock was not granted, the first included. */
  attempts?: number;
  /** The pause after the first failed try; it doubles after each, up to lastBackoffMs. */
  firstBackoffMs?: number;
  lastBackoffMs?: number;
  /** Waits ms milliseconds (a test passes one that returns at once). */
  sleep?: (ms: number) => Promise<void>;
  /** Told of every retry (logged by the callers). */
  onRetry?: (retry: LockRetry) => void;
}

export interface LockRetry {
  what: string;
  /** The try that failed, from 1. */
  attempt: number;
  waitMs: number;
  error: unknown;
}

export const MIGRATE_DEFAULTS = {
  lockTimeoutMs: 2_000,
  attempts: 5,
  firstBackoffMs: 500,
  lastBackoffMs: 8_000,
} as const;

/** lock_not_available (lock_timeout ran out) and deadlock_detected: a try that may pass later. */
const LOCK_CODES = new Set(["55P03", "40P01"]);

export function lockNotGranted(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && LOCK_CODES.has(code);
}

/** A migration gave up: its locks were not granted in any of its tries. */
export class MigrationLockError extends Error {
  constructor(what: string, lockTimeoutMs: number, attempts: number, cause: unknown) {
    super(
      `${what}: a lock it needs was not granted within ${lockTimeoutMs} ms, ${attempts} times ` +
        `(a long transaction or a held lock on its tables; pg_stat_activity and pg_locks ` +
        `show which); nothing of it was applied, run it again once that is over`,
      { cause },
    );
    this.name = "MigrationLockError";
  }
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs work, and again after a pause while it fails for a lock not granted,
 * up to the options' number of tries; then throws MigrationLockError. Any
 * other failure is thrown at once.
 */
export async function withLockRetries<T>(
  what: string,
  work: () => Promise<T>,
  options: MigrateOptions = {},
): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? MIGRATE_DEFAULTS.attempts);
  const first = options.firstBackoffMs ?? MIGRATE_DEFAULTS.firstBackoffMs;
  const last = options.lastBackoffMs ?? MIGRATE_DEFAULTS.lastBackoffMs;
  const sleep = options.sleep ?? sleepFor;
  for (let attempt = 1;; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!lockNotGranted(error)) throw error;
      if (attempt >= attempts) {
        const timeout = options.lockTimeoutMs ?? MIGRATE_DEFAULTS.lockTimeoutMs;
        throw new MigrationLockError(what, timeout, attempts, error);
      }
      const waitMs = Math.min(first * 2 ** (attempt - 1), last);
      options.onRetry?.({ what, attempt, waitMs, error });
      await sleep(waitMs);
    }
  }
}

function checkList(migrations: readonly Migration[]) {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
    }
  });
}

function checkSchemaName(schema: string) {
  if (!/^[a-z][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
}

const lockKey = (schema: string) => `crm-migrate-${schema}`;

/** `set [local] lock_timeout`, its value checked to be a whole number of milliseconds. */
function lockTimeoutStatement(ms: number, local: boolean): string {
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`invalid lock timeout ${ms}`);
  return `set ${local ? "local " : ""}lock_timeout = ${ms}`;
}

export async function migrate(
  db: Database,
  schema: string,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<MigrationResult> {
  checkSchemaName(schema);
  checkList(migrations);
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATE_DEFAULTS.lockTimeoutMs;
  const retrying = { ...options, lockTimeoutMs };
  let current = await withLockRetries(
    `schema ${schema}'s migration table`,
    () =>
      db.transaction(async (tx) => {
        await tx.query("select pg_advisory_xact_lock(hashtext($1))", [lockKey(schema)]);
        await tx.exec(`
        ${lockTimeoutStatement(lockTimeoutMs, true)};
        create schema if not exists ${schema};
        create table if not exists ${schema}.schema_migrations (
          version int primary key,
          name text not null,
          applied_at timestamptz not null default now()
        );
        ${backfillTable(schema)};`);
        return await versionIn(tx, schema);
      }),
    retrying,
  );
  const applied: number[] = [];
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    const what = `${schema} migration ${migration.version} (${migration.name})`;
    const ran = migration.transactional === false
      ? await migrateOutsideTransaction(db, schema, migration, what, retrying)
      : await withLockRetries(
        what,
        () => migrateInTransaction(db, schema, migration, lockTimeoutMs),
        retrying,
      );
    if (ran) applied.push(migration.version);
    current = migration.version;
  }
  return { applied, current: Math.max(current, migrations.length) };
}

/** One migration in a transaction of its own; false when another run applied it first. */
function migrateInTransaction(
  db: Database,
  schema: string,
  migration: Migration,
  lockTimeoutMs: number,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    // Waiting for another run's migration is no harm to the traffic: taken before the timeout.
    await tx.query("select pg_advisory_xact_lock(hashtext($1))", [lockKey(schema)]);
    if (await versionIn(tx, schema) >= migration.version) return false;
    await tx.exec(lockTimeoutStatement(lockTimeoutMs, true));
    await tx.exec(migration.sql);
    await record(tx, schema, migration);
    return true;
  });
}

/**
 * One migration statement by statement on a connection of its own, outside
 * any transaction, under the schema's advisory lock taken for the session.
 * Each statement is tried again on its own; false when another run applied
 * the migration first.
 */
async function migrateOutsideTransaction(
  db: Database,
  schema: string,
  migration: Migration,
  what: string,
  options: MigrateOptions & { lockTimeoutMs: number },
): Promise<boolean> {
  const session = db.session ??
    (db.kind === "pglite" ? <T>(fn: (c: Queryable) => Promise<T>) => fn(db) : undefined);
  if (!session) throw new Error(`${what} runs outside a transaction: the store needs sessions`);
  return await session(async (connection) => {
    await connection.query("select pg_advisory_lock(hashtext($1))", [lockKey(schema)]);
    try {
      if (await versionIn(connection, schema) >= migration.version) return false;
      await connection.exec(lockTimeoutStatement(options.lockTimeoutMs, false));
      for (const statement of splitStatements(migration.sql)) {
        await withLockRetries(
          what,
          async () => {
            const index = await createIndexConcurrently(connection, db.kind, schema, statement);
            if (!index) await connection.exec(statement.text);
          },
          options,
        );
      }
      await record(connection, schema, migration);
      return true;
    } finally {
      // The connection goes back to the pool as it came; when it is lost, so are both.
      await connection.exec("reset lock_timeout").catch(() => {});
      await connection.query("select pg_advisory_unlock(hashtext($1))", [lockKey(schema)])
        .catch(() => {});
    }
  });
}

/** The progress of the schema's background backfills (backfill.ts), made with its migration table. */
function backfillTable(schema: string): string {
  return `create table if not exists ${schema}.backfills (
      name text primary key,
      cursor text,
      done_rows bigint not null default 0,
      total_rows bigint,
      started_at timestamptz,
      updated_at timestamptz,
      finished_at timestamptz
    )`;
}

async function record(q: Queryable, schema: string, migration: Migration) {
  await q.query(
    `insert into ${schema}.schema_migrations (version, name) values ($1, $2)`,
    [migration.version, migration.name],
  );
}

async function versionIn(q: Queryable, schema: string): Promise<number> {
  const rows = await q.query<{ version: number | null }>(
    `select max(version)::int as version from ${schema}.schema_migrations`,
  );
  return rows[0]?.version ?? 0;
}

/** The schema's applied version, 0 when it has never been migrated. */
export async function schemaVersion(db: Queryable, schema: string): Promise<number> {
  checkSchemaName(schema);
  const exists = await db.query<{ found: boolean }>(
    `select to_regclass($1) is not null as found`,
    [`${schema}.schema_migrations`],
  );
  if (!exists[0]?.found) return 0;
  return await versionIn(db, schema);
}
