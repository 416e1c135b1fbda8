/**
 * The handles a service runs with: configuration, logger, clock, storage,
 * Redis and the invalidation bus. `deno task start` opens one platform for the whole
 * process; `deno task service` opens one per service.
 */
import type { Config } from "./config.ts";
import { createLogger, type Logger } from "./log.ts";
import { type Database, openDatabase } from "./db/mod.ts";
import { connectRedis, type Redis } from "./redis.ts";
import { type Bus, createLocalBus, createRedisBus } from "./bus.ts";
import { type Clock, systemClock } from "./clock.ts";

export interface Platform {
  config: Config;
  log: Logger;
  /** Where every time-based decision reads the time (tests move a ManualClock). */
  clock: Clock;
  /** Absent for the gateway, which keeps no state of its own. */
  db?: Database;
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
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  let db: Database | undefined;
  try {
    db = options.database
      ? await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
      : undefined;
  } catch (error) {
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
    redis,
    bus,
    async close() {
      await bus.close();
      await db?.close();
      redis?.disconnect();
    },
  };
}
