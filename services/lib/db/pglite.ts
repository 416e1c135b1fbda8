import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { Database, Param, Queryable, Row } from "./mod.ts";
import { acquireFolderLock } from "./folder_lock.ts";

function queryable(db: PGlite | Transaction): Queryable {
  return {
    async query<T extends Row>(text: string, params: readonly Param[] = []) {
      const result = await db.query<T>(text, params as Param[]);
      return result.rows;
    },
    async exec(script: string) {
      await db.exec(script);
    },
  };
}

/**
 * Opens (creating if needed) the embedded store in `dataDir`/pglite. PGlite is
 * one connection in this process; a lock file keeps a second process from
 * opening the same files, which would corrupt them. `dataDir` "memory://"
 * keeps everything in memory (tests).
 */
export async function openPglite(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  let releaseLock = () => {};
  let db: PGlite;
  if (inMemory) {
    db = new PGlite();
  } else {
    await Deno.mkdir(dataDir, { recursive: true });
    releaseLock = await acquireFolderLock(dataDir);
    try {
      db = new PGlite(`${dataDir}/pglite`);
      await db.waitReady;
    } catch (error) {
      releaseLock();
      throw error;
    }
  }
  await db.waitReady;
  const base = queryable(db);
  return {
    kind: "pglite",
    ...base,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return await db.transaction((tx) => fn(queryable(tx)));
    },
    async close() {
      await db.close();
      releaseLock();
    },
  };
}
