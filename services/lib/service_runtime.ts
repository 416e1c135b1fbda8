/**
 * What every service has in common: its gRPC server with health and
 * reflection, its schema migrations, and its life cycle. A service is
 * NOT_SERVING until its schema is current: migrated at start-up in embedded
 * mode, or by `deno task admin migrate` in a cluster (the service polls).
 */
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { type Database, storageUnavailable } from "./db/mod.ts";
import { ReportReads } from "./db/report_reads.ts";
import { migrate, type Migration, type MigrationResult, schemaVersion } from "./db/migrate.ts";
import { type Backfill, backfillStates, progressOf, runBackfills } from "./db/backfill.ts";
import type { Platform } from "./platform.ts";
import { HealthRegistry, ServingStatus } from "./rpc/health.ts";
import { serverInterceptors } from "./rpc/interceptors.ts";
import { type RpcServer, startRpcServer } from "./rpc/server.ts";
import { reportServiceUp } from "./telemetry.ts";

export interface ServiceContext {
  platform: Platform;
  /** The write path's connections: writes, migrations, and every command but the reads below. */
  db: Database;
  /**
   * Where reports, funnels, exports, segment and share-link reads run:
   * `reports.run((db) => ...)` gives one read-only snapshot on the reports'
   * own connections (the replica when DATABASE_READ_URL is set), cancelled
   * past REPORT_TIMEOUT_MS and then answered 504 `timeout`.
   */
  reports: ReportReads;
  /** Applies pending migrations and marks the service SERVING. */
  migrate(): Promise<MigrationResult>;
  /** The Migrate admin RPC every service serves: migrate(), in its answer's shape. */
  migrateRpc(): Promise<{ appliedVersions: number[]; currentVersion: number }>;
  /** The MigrationStatus admin RPC: the schema's versions and its backfills' progress. */
  migrationStatus(): Promise<MigrationStatus>;
}

export interface MigrationStatus {
  schema: string;
  currentVersion: number;
  latestVersion: number;
  backfills: {
    name: string;
    doneRows: bigint;
    totalRows?: bigint;
    progress: number;
    startedAt: string;
    updatedAt: string;
    finishedAt: string;
  }[];
}

export interface ServiceDefinition {
  name: string;
  schema: string;
  migrations: readonly Migration[];
  /**
   * Background backfills of the schema (db/backfill.ts), run in order by
   * every replica once the schema is current, one replica at a time each.
   */
  backfills?: readonly Backfill[];
  /** Every service this server mounts (public and admin). */
  services: DescService[];
  /** Builds the handlers; called once, before the server listens. */
  setup(context: ServiceContext): ServiceHandlers;
}

export interface ServiceHandlers {
  routes(router: ConnectRouter): void;
  /**
   * Work for once the schema is current, done before the service reports
   * SERVING (ingest makes its partitions ahead). It does not throw: a
   * failure is its own to log, and no reason to stay NOT_SERVING.
   */
  ready?(): Promise<void>;
  /** Work to finish before storage closes (flush buffers, stop timers). */
  close?(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** Migrate at start-up (embedded mode) instead of waiting for `admin migrate`. */
  migrateOnStart: boolean;
}

export interface RunningService {
  name: string;
  url: string;
  port: number;
  /**
   * Resolves once the service is SERVING (its schema current); rejects when
   * migrating at start-up failed for another reason than storage being away.
   */
  serving: Promise<void>;
  close(): Promise<void>;
}

/** The waits between two attempts to reach storage: doubling from the first to the last. */
export const STORAGE_RETRY_MS = { first: 250, last: 5000 };

/**
 * Runs attempt until it answers true, waiting longer after each false or
 * failure (STORAGE_RETRY_MS), until stopped. A failure that onFailure
 * rethrows ends the wait with it.
 */
async function untilDone(
  attempt: () => Promise<boolean>,
  onFailure: (error: unknown, retryInMs: number) => void,
  stopped: AbortSignal,
): Promise<void> {
  let wait = STORAGE_RETRY_MS.first;
  while (!stopped.aborted) {
    try {
      if (await attempt()) return;
    } catch (error) {
      onFailure(error, wait);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      stopped.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    wait = Math.min(wait * 2, STORAGE_RETRY_MS.last);
  }
}

/**
 * The context a service's handlers are built with: the platform with the
 * service's own logger, its storage, and its migrations (`onMigrated` runs
 * once they are current). `runService` serves the handlers on a port; a test
 * may route them through an in-memory transport instead.
 */
export function serviceContext(
  platform: Platform,
  definition: Pick<ServiceDefinition, "name" | "schema" | "migrations" | "backfills">,
  onMigrated: () => void | Promise<void> = () => {},
): ServiceContext {
  const db = platform.db;
  if (!db) throw new Error(`${definition.name} needs storage`);
  const log = platform.log.child({ service: definition.name });
  const reports = platform.reports ??
    new ReportReads(db, { timeoutMs: platform.config.pools.reportTimeoutMs });
  const context: ServiceContext = {
    platform: { ...platform, log },
    db,
    reports,
    async migrate() {
      const result = await migrate(db, definition.schema, definition.migrations, {
        onRetry: ({ what, attempt, waitMs, error }) =>
          log.warn("migration waits for a lock; trying again", {
            migration: what,
            attempt,
            retryInMs: waitMs,
            error: String(error),
          }),
      });
      if (result.applied.length) log.info("migrations applied", { versions: result.applied });
      await onMigrated();
      return result;
    },
    async migrateRpc() {
      const result = await context.migrate();
      return { appliedVersions: result.applied, currentVersion: result.current };
    },
    async migrationStatus() {
      const stored = await backfillStates(db, definition.schema);
      // A declared backfill not started yet is listed too, at 0.
      const names = new Set(stored.map((s) => s.name));
      const waiting = (definition.backfills ?? []).filter((b) => !names.has(b.name)).map((b) => ({
        schema: definition.schema,
        name: b.name,
        doneRows: 0,
        totalRows: undefined,
        startedAt: undefined,
        updatedAt: undefined,
        finishedAt: undefined,
      }));
      return {
        schema: definition.schema,
        currentVersion: await schemaVersion(db, definition.schema),
        latestVersion: definition.migrations.length,
        backfills: [...stored, ...waiting].map((state) => ({
          name: state.name,
          doneRows: BigInt(state.doneRows),
          ...(state.totalRows === undefined ? {} : { totalRows: BigInt(state.totalRows) }),
          progress: progressOf(state),
          startedAt: state.startedAt ?? "",
          updatedAt: state.updatedAt ?? "",
          finishedAt: state.finishedAt ?? "",
        })),
      };
    },
  };
  return context;
}

/**
 * Serves a service on its port at once, NOT_SERVING until its schema is
 * current: migrated here (embedded mode, `deno task start`) or by `deno task
 * admin migrate` (polled). Either way storage that cannot be reached is
 * retried with backoff while the service stays up (docs/operations.md,
 * "Starting without a backend").
 */
export async function runService(
  platform: Platform,
  definition: ServiceDefinition,
  listen: ListenOptions,
): Promise<RunningService> {
  const health = new HealthRegistry();
  const stopped = new AbortController();
  for (const s of definition.services) health.set(s.typeName, ServingStatus.NOT_SERVING);
  const latest = definition.migrations.length;

  let readyWork: Promise<void> | undefined;
  let backfilling: Promise<void> | undefined;
  // Called only once the handlers below are built (at start-up's migration or a later one).
  const markReady = async () => {
    readyWork ??= handlers.ready?.();
    await readyWork;
    health.setAll(ServingStatus.SERVING);
    if (definition.backfills?.length) {
      backfilling ??= runBackfills(db, definition.schema, definition.backfills, stopped.signal, {
        clock: platform.clock,
        onError: (backfill, error) =>
          log.warn("backfill batch failed; trying again", { backfill, error: String(error) }),
      });
    }
  };
  const context = serviceContext(platform, definition, markReady);
  const { db, platform: { log } } = context;
  const handlers = definition.setup(context);

  let server: RpcServer;
  try {
    server = await startRpcServer({
      services: definition.services,
      routes: handlers.routes,
      interceptors: serverInterceptors({
        log,
        adminToken: platform.config.adminToken,
        adminTokenNext: platform.config.adminTokenNext,
      }),
      health,
      host: listen.host,
      port: listen.port,
    });
  } catch (error) {
    await handlers.close?.();
    throw error;
  }
  const schema = definition.schema;
  const serving = listen.migrateOnStart
    ? untilDone(async () => {
      await context.migrate();
      return true;
    }, (error, retryInMs) => {
      // Anything but storage being away is a fault of the migrations: start-up fails on it.
      if (!storageUnavailable(error)) throw error;
      log.warn("storage not reachable yet; migrating when it answers", {
        schema,
        retryInMs,
        error: String(error),
      });
    }, stopped.signal)
    : untilDone(async () => {
      if (await schemaVersion(db, schema) >= latest) {
        await markReady();
        return true;
      }
      log.warn("schema not current; run `deno task admin migrate`", { schema });
      return false;
    }, (error, retryInMs) => {
      log.warn("storage not reachable yet", { schema, retryInMs, error: String(error) });
    }, stopped.signal);
  serving.catch(() => {}); // the caller that waits for it sees the failure
  const running = server;
  const up = reportServiceUp(definition.name);
  return {
    name: definition.name,
    url: running.url,
    port: running.port,
    serving,
    async close() {
      up();
      stopped.abort();
      await serving.catch(() => {});
      await backfilling;
      health.setAll(ServingStatus.NOT_SERVING);
      await running.close();
      await handlers.close?.();
    },
  };
}
