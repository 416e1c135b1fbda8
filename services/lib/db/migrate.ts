/**
 * Versioned, forward-only migrations, one list per service, each service in
 * its own Postgres schema. Applying takes a transaction-scoped advisory lock,
 * so replicas starting at once (or two `admin migrate` runs) apply each
 * migration exactly once and the others wait, then find nothing to do.
 */
import type { Database, Queryable } from "./mod.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationResult {
  applied: number[];
  current: number;
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

export async function migrate(
  db: Database,
  schema: string,
  migrations: readonly Migration[],
): Promise<MigrationResult> {
  checkSchemaName(schema);
  checkList(migrations);
  return await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext($1))", [`crm-migrate-${schema}`]);
    await tx.exec(`
      create schema if not exists ${schema};
      create table if not exists ${schema}.schema_migrations (
        version int primary key,
        name text not null,
        applied_at timestamptz not null default now()
      );`);
    const current = await versionIn(tx, schema);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await tx.exec(migration.sql);
      await tx.query(
        `insert into ${schema}.schema_migrations (version, name) values ($1, $2)`,
        [migration.version, migration.name],
      );
      applied.push(migration.version);
    }
    return { applied, current: Math.max(current, migrations.length) };
  });
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
