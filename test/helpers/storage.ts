/** A fresh, empty database of either kind for one test file. */
import postgres from "postgres";
import type { Database } from "../../services/lib/db/mod.ts";
import { openPglite } from "../../services/lib/db/pglite.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { DATABASE_URL, type StorageKind, uniqueId } from "./env.ts";
import { useEmptyClusterTemplate } from "./pglite_template.ts";

export interface FreshDatabase {
  db: Database;
  /** The connection string of the fresh database (Postgres only). */
  url?: string;
  drop(): Promise<void>;
}

/** A new Postgres database on the configured server, dropped afterwards. */
export async function freshPostgresUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!DATABASE_URL) throw new Error("DATABASE_URL is not set");
  const name = uniqueId("crm_test_");
  const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
      try {
        await again.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await again.end();
      }
    },
  };
}

export async function freshDatabase(kind: StorageKind): Promise<FreshDatabase> {
  if (kind === "pglite") {
    await useEmptyClusterTemplate();
    const db = await openPglite("memory://");
    return { db, drop: () => db.close() };
  }
  const { url, drop } = await freshPostgresUrl();
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
