/** A fresh, empty database of either kind for one test file. */
import type { Database } from "../../services/lib/db/mod.ts";
import { openPglite } from "../../services/lib/db/pglite.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { DATABASE_URL, type StorageKind } from "./env.ts";
import {
  MIGRATED,
  useEmptyClusterTemplate,
  useMigratedClusterTemplate,
} from "./pglite_template.ts";
import { migratedTemplateName } from "./migrated_template.ts";
import { createTestDatabase, dropTestDatabase } from "./run_databases.ts";

export interface FreshDatabase {
  db: Database;
  /** The connection string of the fresh database (Postgres only). */
  url?: string;
  drop(): Promise<void>;
}

/**
 * A new Postgres database on the configured server, dropped afterwards
 * (helpers/run_databases.ts): empty, or with `migrated` a copy of the
 * migrated template the run's global setup made (helpers/migrated_template.ts).
 */
export async function freshPostgresUrl(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!DATABASE_URL) throw new Error("DATABASE_URL is not set");
  const name = await createTestDatabase(
    options.migrated ? await migratedTemplateName() : undefined,
  );
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => dropTestDatabase(name),
  };
}

/**
 * A fresh database of either kind: empty, or with `migrated` holding every
 * service's schema as the run's migrations make it (a copy of the run's
 * migrated template; empty when the run made none, so a caller still
 * applies its migrations, which are then quick no-ops).
 */
export async function freshDatabase(
  kind: StorageKind,
  options: { migrated?: boolean } = {},
): Promise<FreshDatabase> {
  if (kind === "pglite") {
    const migrated = options.migrated ? await useMigratedClusterTemplate() : false;
    if (!migrated) await useEmptyClusterTemplate();
    const db = await openPglite(migrated ? `memory://${MIGRATED}` : "memory://");
    return { db, drop: () => db.close() };
  }
  const { url, drop } = await freshPostgresUrl(options);
  const db = await openPostgres(url);
  return {
    db,
    url,
    async drop() {
      await db.close();
      await drop();
    },
  };
}
