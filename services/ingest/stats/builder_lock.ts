/**
 * What the background builders of the reports' tables (periods.ts,
 * returns.ts, pages.ts) share: the lock they take per site and kind, so that
 * two replicas never build the same site's tables at once, and the round of
 * every site with data.
 */
import type { Database, Queryable } from "../../lib/db/mod.ts";

/**
 * Runs `fn` in a transaction holding the site's lock of builder `name`
 * (transaction scoped, advisory), with JIT off on Postgres; undefined,
 * without running it, when another builder holds it.
 */
export function underBuilderLock<T>(
  db: Database,
  name: string,
  siteId: string,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T | undefined> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ locked: boolean }>(
      "select pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) as locked",
      [name, siteId],
    );
    if (!lock.locked) return undefined;
    // As for the reports' queries (derived_engine.ts): JIT compiling a statement run once costs
    // more than it saves; with it, building 466 periods of a million page views took 52 s.
    if (db.kind === "postgres") await tx.exec("set local jit = off");
    return await fn(tx);
  });
}

/**
 * Runs `build` for every site with report data (counters or counted
 * changes), one after the other, and answers the days built in all; stops
 * between sites when `signal` is aborted.
 */
export async function buildEverySite(
  db: Database,
  build: (siteId: string) => Promise<{ built: number }>,
  signal?: AbortSignal,
): Promise<{ built: number }> {
  const sites = await db.query<{ site_id: string }>(
    `select site_id from ingest.stat_day_changes
     union select site_id from ingest.stat_counter_days order by 1`,
  );
  let built = 0;
  for (const site of sites) {
    if (signal?.aborted) break;
    built += (await build(site.site_id)).built;
  }
  return { built };
}
