/**
 * The whole system in this process on ephemeral ports, on the storage asked
 * for, as `deno task start` composes it.
 */
import { type Config, loadConfig } from "../../services/lib/config.ts";
import { createLogger, type Logger } from "../../services/lib/log.ts";
import type { Clock } from "../../services/lib/clock.ts";
import { type RunningSystem, startSystem } from "../../services/cli/system.ts";
import type { IngestOptions } from "../../services/ingest/main.ts";
import { REDIS_URL, type StorageKind, uniqueId } from "./env.ts";
import { freshPostgresUrl } from "./storage.ts";
import {
  MIGRATED,
  useEmptyClusterTemplate,
  useMigratedClusterTemplate,
} from "./pglite_template.ts";
import { registerGateway } from "./openapi.ts";

export interface TestSystemOptions {
  /** Serve the demo page at /demo/ (needs the bundled demo site, e.g. seeded from it). */
  demoPage?: boolean;
  /** Load the bundled demo site and its weeks of history, as `deno task start` does on empty storage. */
  demo?: boolean;
  storage?: StorageKind;
  /** Manifest to import before serving (object or JSON text). */
  seed?: unknown;
  /** Use REDIS_URL for counters, caches and the bus (when it is set). */
  redis?: boolean;
  /** Extra settings, e.g. limits. */
  env?: Record<string, string>;
  /** Logger for the whole system (e.g. one with a sink that captures lines). */
  log?: Logger;
  /**
   * An existing Postgres database to share with another system (storage
   * "postgres" only); it is not dropped on close.
   */
  databaseUrl?: string;
  /**
   * Start on an empty Postgres database and apply every migration, as the
   * first start of an installation does; by default the system starts on a
   * copy of the run's migrated template, which holds the same.
   */
  emptyDatabase?: boolean;
  /** The clock every service and the gateway read (a ManualClock moves time without waiting). */
  clock?: Clock;
  /** ingest-service's in-process options (e.g. a shorter mail check). */
  ingest?: IngestOptions;
}

export interface TestSystem {
  url: string;
  /** The Postgres database the system runs on (storage "postgres"). */
  databaseUrl?: string;
  config: Config;
  system: RunningSystem;
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** Limits high enough that ordinary tests never meet them. */
export const RELAXED_LIMITS = {
  RATE_LIMIT_CONTENT_PER_IP: "1000000",
  RATE_LIMIT_CONTENT_PER_KEY: "1000000",
  RATE_LIMIT_INVALID_KEY_PER_IP: "1000000",
  RATE_LIMIT_MARKETING_PER_IP: "1000000",
  RATE_LIMIT_MARKETING_PER_SITE: "1000000",
  RATE_LIMIT_STATS_PER_KEY: "1000000",
};

export async function startTestSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const storage = options.storage ?? "pglite";
  const migratedPglite = storage === "pglite" && !options.emptyDatabase &&
    await useMigratedClusterTemplate();
  if (storage === "pglite" && !migratedPglite) await useEmptyClusterTemplate();
  const pg = storage === "postgres" && !options.databaseUrl
    ? await freshPostgresUrl({ migrated: !options.emptyDatabase })
    : undefined;
  const env: Record<string, string> = {
    PORT: "0",
    AUTH_URL: "http://127.0.0.1:0",
    CONTENT_URL: "http://127.0.0.1:0",
    INGEST_URL: "http://127.0.0.1:0",
    CRM_DATA_DIR: migratedPglite ? `memory://${MIGRATED}` : "memory://",
    LOG_LEVEL: "error",
    REDIS_KEY_PREFIX: `${uniqueId("crmtest")}:`,
    ...RELAXED_LIMITS,
    ...options.env,
  };
  if (pg) env.DATABASE_URL = pg.url;
  if (storage === "postgres" && options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  if (options.redis && REDIS_URL) env.REDIS_URL = REDIS_URL;
  const config = loadConfig(env, "start");
  const seed = options.seed === undefined
    ? undefined
    : typeof options.seed === "string"
    ? options.seed
    : JSON.stringify(options.seed);
  let system: RunningSystem;
  try {
    system = await startSystem(config, {
      seed,
      demoPage: options.demoPage,
      demo: options.demo,
      clock: options.clock,
      ingest: options.ingest,
      log: options.log ?? createLogger(config.logLevel),
    });
  } catch (error) {
    await pg?.drop();
    throw error;
  }
  const url = system.gateway.url;
  const unregister = registerGateway(url);
  return {
    url,
    databaseUrl: config.databaseUrl,
    config: system.config,
    system,
    get: (path, init) => fetch(url + path, init),
    async close() {
      unregister();
      await system.close();
      await pg?.drop();
    },
  };
}

export async function readFixture(name: string): Promise<unknown> {
  return JSON.parse(await Deno.readTextFile(new URL(`../fixtures/${name}`, import.meta.url)));
}
