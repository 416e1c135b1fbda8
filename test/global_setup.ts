/**
 * Runs once before any test file. The outside servers the suite was given
 * must answer: when DATABASE_URL or REDIS_URL is set but unreachable, the
 * whole run fails here with one clear line, before any test could skip them.
 * It also makes the empty PGlite cluster every in-memory store of the run
 * starts from (helpers/pglite_template.ts) and, with Postgres, the migrated
 * database the systems of the run start from (helpers/migrated_template.ts),
 * and names the run, whose databases its teardown drops
 * (helpers/run_databases.ts).
 */
import { DATABASE_URL, REDIS_URL } from "./helpers/env.ts";
import { openPostgres } from "../services/lib/db/postgres.ts";
import { connectRedis } from "../services/lib/redis.ts";
import { makeClusterTemplates } from "./helpers/pglite_template.ts";
import { ensureMigratedTemplate } from "./helpers/migrated_template.ts";
import { dropRunDatabases, dropStaleRunDatabases, startRun } from "./helpers/run_databases.ts";

async function answers(setting: string, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    throw new Error(`${setting} is set but does not answer: ${(error as Error).message}`);
  }
}

export async function setup(): Promise<() => Promise<void>> {
  if (DATABASE_URL) {
    await answers("DATABASE_URL", async () => {
      const db = await openPostgres(DATABASE_URL!);
      await db.close();
    });
  }
  if (REDIS_URL) {
    await answers("REDIS_URL", async () => {
      const redis = await connectRedis(REDIS_URL!);
      redis.disconnect();
    });
  }
  await makeClusterTemplates();
  const run = startRun();
  if (DATABASE_URL) {
    await ensureMigratedTemplate();
    await dropStaleRunDatabases();
  }
  const servers = [DATABASE_URL && "postgres", REDIS_URL && "redis"].filter(Boolean);
  console.info(
    `integration servers: ${servers.length ? servers.join(", ") : "none (embedded only)"}`,
  );
  return async () => {
    if (DATABASE_URL) await dropRunDatabases(run);
  };
}
