import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { Database, Param, Queryable, Row } from "./mod.ts";
import { acquireFolderLock } from "./folder_lock.ts";

/**
 * Postgres' memory settings for one embedded connection. The defaults
 * (shared_buffers 128 MB, maintenance_work_mem 64 MB) are sized for a
 * server of many connections; here every buffer lives in the WebAssembly
 * heap of this process and is touched once Postgres starts, so they were
 * most of the system's memory (`deno task start` peaked near 850 MB). The
 * working set of the service tables fits in far less, and reads of hot
 * content are answered from the gateway's cache before they reach storage.
 */
export const PGLITE_SETTINGS = {
  shared_buffers: "16MB",
  wal_buffers: "1MB",
  maintenance_work_mem: "16MB",
  temp_buffers: "2MB",
};

const startParams = [
  ...PGlite.defaultStartParams,
  ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
];

/** PGlite's options: the settings above on top of its own start parameters. */
export function pgliteOptions(): { startParams: string[] } {
  return { startParams };
}

/**
 * Runs PGlite's initdb for a fresh folder in a short-lived child process
 * (pglite_init.ts), so its memory leaves with it. The caller holds the
 * folder's lock for the child. When the child cannot run or fails (no
 * permission to run a process, say), PGlite initializes the folder in this
 * process, as it always can.
 */
async function initializeApart(folder: string): Promise<void> {
  try {
    await Deno.stat(`${folder}/PG_VERSION`);
    return;
  } catch { /* a fresh folder */ }
  try {
    await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./pglite_init.ts", import.meta.url).href, folder],
      stdout: "null",
      stderr: "inherit",
    }).output();
  } catch { /* left to PGlite in this process */ }
}

/**
 * Clusters' files that in-memory stores start from (tests): PGlite's initdb
 * takes 4 to 5 s on two busy cores, a copy of its result loads in about 1 s.
 * `memory://` starts from the files registered under "" (an empty cluster's),
 * `memory://NAME` from those under NAME (a migrated one, say). Set by a test
 * helper (`startInMemoryFrom`); without files an in-memory store runs initdb
 * as always.
 */
const inMemoryClusters = new Map<string, Blob>();

/** In-memory stores `memory://NAME` opened from now on start from these files, a cluster as dumped. */
export function startInMemoryFrom(files: Blob, name = ""): void {
  inMemoryClusters.set(name, files);
}

/** The files of a freshly initialized, empty cluster (PGlite's initdb), as a tarball. */
export async function emptyClusterFiles(): Promise<Blob> {
  const db = new PGlite(pgliteOptions());
  try {
    await db.waitReady;
    return await db.dumpDataDir("none");
  } finally {
    await db.close();
  }
}

/**
 * The files of an in-memory cluster (started from the files registered
 * under "", as `memory://` is) after `prepare` ran on it, as a tarball: a
 * migrated cluster for tests, say.
 */
export async function preparedClusterFiles(
  prepare: (db: Database) => Promise<void>,
): Promise<Blob> {
  const pg = await openInMemory("");
  try {
    await prepare(storeOf(pg, () => {}));
    return await pg.dumpDataDir("none");
  } finally {
    await pg.close();
  }
}

async function openInMemory(name: string): Promise<PGlite> {
  const files = inMemoryClusters.get(name);
  if (name && !files) throw new Error(`no in-memory cluster named ${name} was registered`);
  const db = new PGlite({ ...pgliteOptions(), loadDataDir: files });
  await db.waitReady;
  return db;
}

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
    db = await openInMemory(dataDir.slice("memory://".length));
  } else {
    await Deno.mkdir(dataDir, { recursive: true });
    releaseLock = await acquireFolderLock(dataDir);
    try {
      await initializeApart(`${dataDir}/pglite`);
      db = new PGlite(`${dataDir}/pglite`, pgliteOptions());
      await db.waitReady;
    } catch (error) {
      releaseLock();
      throw error;
    }
  }
  await db.waitReady;
  return storeOf(db, releaseLock);
}

function storeOf(db: PGlite, releaseLock: () => void): Database {
  return {
    kind: "pglite",
    ...queryable(db),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return await db.transaction((tx) => fn(queryable(tx)));
    },
    async close() {
      await db.close();
      releaseLock();
    },
  };
}
