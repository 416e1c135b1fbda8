/**
 * What every service has in common: its gRPC server with health and
 * reflection, its schema migrations, and its life cycle. A service is
 * NOT_SERVING until its schema is current: migrated at start-up in embedded
 * mode, or by `deno task admin migrate` in a cluster (the service polls).
 */
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Database } from "./db/mod.ts";
import { migrate, type Migration, type MigrationResult, schemaVersion } from "./db/migrate.ts";
import type { Platform } from "./platform.ts";
import { HealthRegistry, ServingStatus } from "./rpc/health.ts";
import { serverInterceptors } from "./rpc/interceptors.ts";
import { type RpcServer, startRpcServer } from "./rpc/server.ts";

export interface ServiceContext {
  platform: Platform;
  db: Database;
  /** Applies pending migrations and marks the service SERVING. */
  migrate(): Promise<MigrationResult>;
  /** The Migrate admin RPC every service serves: migrate(), in its answer's shape. */
  migrateRpc(): Promise<{ appliedVersions: number[]; currentVersion: number }>;
}

export interface ServiceDefinition {
  name: string;
  schema: string;
  migrations: readonly Migration[];
  /** Every service this server mounts (public and admin). */
  services: DescService[];
  /** Builds the handlers; called once, before the server listens. */
  setup(context: ServiceContext): ServiceHandlers;
}

export interface ServiceHandlers {
  routes(router: ConnectRouter): void;
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
  close(): Promise<void>;
}

const SCHEMA_POLL_MS = 2000;

/**
 * The context a service's handlers are built with: the platform with the
 * service's own logger, its storage, and its migrations (`onMigrated` runs
 * once they are current). `runService` serves the handlers on a port; a test
 * may route them through an in-memory transport instead.
 */
export function serviceContext(
  platform: Platform,
  definition: Pick<ServiceDefinition, "name" | "schema" | "migrations">,
  onMigrated: () => void = () => {},
): ServiceContext {
  const db = platform.db;
  if (!db) throw new Error(`${definition.name} needs storage`);
  const log = platform.log.child({ service: definition.name });
  const context: ServiceContext = {
    platform: { ...platform, log },
    db,
    async migrate() {
      const result = await migrate(db, definition.schema, definition.migrations);
      if (result.applied.length) log.info("migrations applied", { versions: result.applied });
      onMigrated();
      return result;
    },
    async migrateRpc() {
      const result = await context.migrate();
      return { appliedVersions: result.applied, currentVersion: result.current };
    },
  };
  return context;
}

export async function runService(
  platform: Platform,
  definition: ServiceDefinition,
  listen: ListenOptions,
): Promise<RunningService> {
  const health = new HealthRegistry();
  for (const s of definition.services) health.set(s.typeName, ServingStatus.NOT_SERVING);
  const latest = definition.migrations.length;

  const markReady = () => health.setAll(ServingStatus.SERVING);
  const context = serviceContext(platform, definition, markReady);
  const { db, platform: { log } } = context;
  const handlers = definition.setup(context);

  let server: RpcServer | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  try {
    if (listen.migrateOnStart) await context.migrate();
    server = await startRpcServer({
      services: definition.services,
      routes: handlers.routes,
      interceptors: serverInterceptors({ log, adminToken: platform.config.adminToken }),
      health,
      host: listen.host,
      port: listen.port,
    });
    if (!listen.migrateOnStart) {
      const check = async () => {
        try {
          if (await schemaVersion(db, definition.schema) >= latest) {
            markReady();
            clearInterval(poll);
            return;
          }
          log.warn("schema not current; run `deno task admin migrate`", {
            schema: definition.schema,
          });
        } catch (error) {
          log.warn("storage not reachable yet", { error });
        }
      };
      await check();
      if (health.get("") !== ServingStatus.SERVING) poll = setInterval(check, SCHEMA_POLL_MS);
    }
  } catch (error) {
    await server?.close(0);
    await handlers.close?.();
    throw error;
  }
  const running = server;
  return {
    name: definition.name,
    url: running.url,
    port: running.port,
    async close() {
      clearInterval(poll);
      health.setAll(ServingStatus.NOT_SERVING);
      await running.close();
      await handlers.close?.();
    },
  };
}
