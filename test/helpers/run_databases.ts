/**
 * The Postgres databases a test run makes, and how they go away.
 *
 * Postgres checkpoints on every `drop database` (it must be sure the
 * checkpointer forgot the database's files), and a checkpoint syncs every
 * file any test dirtied since the last one: about a second each on these
 * machines, and a run makes some sixty databases. So a file's database is
 * not dropped while the file waits: its drop starts in the background, and
 * the run's global teardown drops whatever is left, all at once, so that
 * their checkpoints coincide.
 *
 * A run's databases carry its id (`crm_test_<run>_…`), which the global setup
 * sets (CRM_TEST_RUN) before the workers start, so the teardown drops its own
 * run's databases and never another's running beside it. Outside a run (the
 * benchmarks) a drop is awaited.
 */
import postgres from "postgres";
import process from "node:process";
import { DATABASE_URL, uniqueId } from "./env.ts";

const RUN_SETTING = "CRM_TEST_RUN";
const PREFIX = "crm_test_";
/** A run's databases left after this long belong to a run that was killed. */
const STALE_AFTER_MS = 12 * 60 * 60 * 1000;

/** One connection to the configured server's maintenance database, for creating and dropping. */
export const adminConnection = () =>
  postgres(DATABASE_URL!, { max: 1, onnotice: () => {}, connect_timeout: 5 });

/** Starts a run: its id, which the workers it starts read from the environment. */
export function startRun(now = Date.now()): string {
  const run = `r${now.toString(36)}`;
  process.env[RUN_SETTING] = run;
  return run;
}

const currentRun = () => process.env[RUN_SETTING] || undefined;

/** A new database's name: in a run, one the run's teardown will find. */
export function testDatabaseName(): string {
  const run = currentRun();
  return uniqueId(run ? `${PREFIX}${run}_` : PREFIX);
}

/** Makes a new database, empty or a copy of `template`, and gives its name. */
export async function createTestDatabase(template?: string): Promise<string> {
  const name = testDatabaseName();
  const sql = adminConnection();
  try {
    await sql.unsafe(`create database ${name}${template ? ` template ${template}` : ""}`);
  } finally {
    await sql.end();
  }
  return name;
}

async function dropDatabases(names: string[]): Promise<void> {
  if (names.length === 0) return;
  // One connection per drop: the drops wait on their checkpoints together.
  await Promise.all(names.map(async (name) => {
    const sql = adminConnection();
    try {
      await sql.unsafe(`drop database if exists ${name} with (force)`);
    } finally {
      await sql.end();
    }
  }));
}

/**
 * Drops a database its file has closed every connection to: in a run, in the
 * background (the teardown drops it if the worker ends first); outside a run,
 * before it returns.
 */
export async function dropTestDatabase(name: string): Promise<void> {
  if (!currentRun()) return await dropDatabases([name]);
  dropDatabases([name]).catch(() => {
    // The run's teardown drops it.
  });
}

/** The server's databases whose names are LIKE `pattern`. */
async function databasesLike(pattern: string): Promise<string[]> {
  const sql = adminConnection();
  try {
    const rows = await sql<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname LIKE ${pattern}`;
    return rows.map((row) => row.datname);
  } finally {
    await sql.end();
  }
}

/** The run's databases that are left, dropped at once (the global teardown). */
export async function dropRunDatabases(run: string): Promise<number> {
  const names = await databasesLike(`${PREFIX}${run}\\_%`);
  await dropDatabases(names);
  return names.length;
}

/** Drops the databases of runs that started over STALE_AFTER_MS ago and were killed. */
export async function dropStaleRunDatabases(now = Date.now()): Promise<number> {
  const names = (await databasesLike(`${PREFIX}r%\\_%`)).filter((name) => {
    const started = runStartOf(name);
    return started !== undefined && now - started > STALE_AFTER_MS;
  });
  await dropDatabases(names);
  return names.length;
}

/** When the run that made a database started, from its name; undefined for other names. */
export function runStartOf(name: string): number | undefined {
  const match = /^crm_test_r([0-9a-z]+)_/.exec(name);
  if (!match) return undefined;
  const started = parseInt(match[1], 36);
  return Number.isFinite(started) ? started : undefined;
}
