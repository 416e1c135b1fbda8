/**
 * The handles a service runs with: configuration, logger, clock, storage,
 * Redis and the invalidation bus. `deno task start` opens one platform for the whole
 * process; `deno task service` opens one per service.
 */
import type { Config } from "./config.ts";
import { createLogger, type Logger } from "./log.ts";
import { type Database, openDatabase } from "./db/mod.ts";
import { ReportReads } from "./db/report_reads.ts";
import { connectRedis, type Redis } from "./redis.ts";
import { type Bus, createLocalBus, createRedisBus } from "./bus.ts";
import { type Clock, systemClock } from "./clock.ts";

export interface Platform {
  config: Config;
  log: Logger;
  /** Where every time-based decision reads the time (tests move a ManualClock). */
  clock: Clock;
  /** The write path's connections (DATABASE_POOL_SIZE); absent for the gateway, which keeps no state of its own. */
  db?: Database;
  /**
   * Where reports, funnels, exports, segment and share-link reads run: a pool
   * of their own (REPORT_POOL_SIZE, on DATABASE_READ_URL when set, connected on
   * first use), bounded by REPORT_TIMEOUT_MS; the one embedded connection
   * without a server. Absent with db.
   */
  reports?: ReportReads;
  redis?: Redis;
  bus: Bus;
  close(): Promise<void>;
}

export interface OpenPlatformOptions {
  database: boolean;
  log?: Logger;
  clock?: Clock;
  /** The bus to use when there is no Redis (a thread fed by the main thread's bus). */
  localBus?: Bus;
}

export async function openPlatform(
  config: Config,
  options: OpenPlatformOptions,
): Promise<Platform> {
  const log = options.log ?? createLogger(config.logLevel);
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : undefined;
  let db: Database | undefined;
  let reports: ReportReads | undefined;
  try {
    db = options.database
      ? await openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        poolSize: config.pools.writeSize,
        poolName: "crm",
        // A service starts without Postgres and is NOT_SERVING until it answers (service_runtime.ts).
        checkConnection: false,
      })
      : undefined;
    reports = db && await openReports(config, db);
  } catch (error) {
    await db?.close();
    redis?.disconnect();
    throw error;
  }
  const bus = redis
    ? createRedisBus(redis, log, config.redisKeyPrefix)
    : options.localBus ?? createLocalBus();
  return {
    config,
    log,
    clock: options.clock ?? systemClock,
    db,
    reports,
    redis,
    bus,
    async close() {
      await bus.close();
      if (reports && reports.db !== db) await reports.close();
      await db?.close();
      redis?.disconnect();
    },
  };
}

/**
 * The reports' connections: a pool of their own on a server (the replica
 * when DATABASE_READ_URL is set), opened on first use; the embedded store's
 * one connection otherwise.
 */
async function openReports(config: Config, db: Database): Promise<ReportReads> {
  const options = { timeoutMs: config.pools.reportTimeoutMs };
  if (db.kind === "pglite" || !config.databaseUrl) return new ReportReads(db, options);
  const reads = await openDatabase({
    databaseUrl: config.databaseReadUrl ?? config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.pools.reportSize,
    checkConnection: false,
    poolName: "crm-reports",
  });
  return new ReportReads(reads, options);
}
