/**
 * A service's real handlers on PGlite, reached through Connect's in-memory
 * router transport: the same definition, context, migrations and server
 * interceptors (request id, logging, the admin token) as a served service,
 * and the same client interceptors, without a port or an HTTP server. Calls
 * still go through the protobuf encoding, so answers and typed errors (Code
 * and ErrorDetail) arrive as a remote caller sees them.
 */
import type { DescService } from "@bufbuild/protobuf";
import {
  type Client,
  type ConnectRouter,
  createClient,
  createConnectRouter,
  createRouterTransport,
} from "@connectrpc/connect";
import { type Bus, createLocalBus } from "../../services/lib/bus.ts";
import { type Clock, systemClock } from "../../services/lib/clock.ts";
import { loadConfig } from "../../services/lib/config.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import { createLogger, type Logger } from "../../services/lib/log.ts";
import type { Platform } from "../../services/lib/platform.ts";
import { clientInterceptors, serverInterceptors } from "../../services/lib/rpc/interceptors.ts";
import { serviceContext, type ServiceDefinition } from "../../services/lib/service_runtime.ts";
import { freshDatabase } from "./storage.ts";

export interface InMemoryOptions {
  /** Settings on top of an embedded system's defaults (e.g. ADMIN_TOKEN). */
  env?: Record<string, string>;
  clock?: Clock;
  /** A database shared with other services (not closed with this one); a fresh PGlite otherwise. */
  db?: Database;
  /** A bus shared with other services, so their messages reach each other. */
  bus?: Bus;
  log?: Logger;
}

export interface InMemoryService {
  platform: Platform;
  db: Database;
  /** A client of one of the service's services; with adminToken, as `admin` sends it. */
  client<T extends DescService>(service: T, options?: { adminToken?: string }): Client<T>;
  /** A router with the service's handlers and server interceptors, as its port serves them. */
  router(): ConnectRouter;
  close(): Promise<void>;
}

const quiet = createLogger("error", {}, () => {});

export async function inMemoryService(
  define: (platform: Platform) => ServiceDefinition,
  options: InMemoryOptions = {},
): Promise<InMemoryService> {
  const db = options.db ?? (await freshDatabase("pglite", { migrated: true })).db;
  const config = loadConfig(
    { CRM_DATA_DIR: "memory://", LOG_LEVEL: "error", ...options.env },
    "start",
  );
  const bus = options.bus ?? createLocalBus();
  const platform: Platform = {
    config,
    log: options.log ?? quiet,
    clock: options.clock ?? systemClock,
    db,
    bus,
    close: () => Promise.resolve(),
  };
  const definition = define(platform);
  const context = serviceContext(platform, definition);
  const handlers = definition.setup(context);
  try {
    await context.migrate();
    await handlers.ready?.();
  } catch (error) {
    await handlers.close?.();
    if (!options.db) await db.close();
    throw error;
  }
  const interceptors = serverInterceptors({
    log: context.platform.log,
    adminToken: config.adminToken,
    adminTokenNext: config.adminTokenNext,
  });
  return {
    platform: context.platform,
    db,
    client(service, clientOptions = {}) {
      const transport = createRouterTransport(handlers.routes, {
        router: { interceptors },
        transport: { interceptors: clientInterceptors(clientOptions) },
      });
      return createClient(service, transport);
    },
    router() {
      const router = createConnectRouter({ interceptors });
      handlers.routes(router);
      return router;
    },
    async close() {
      await handlers.close?.();
      if (!options.bus) await bus.close();
      if (!options.db) await db.close();
    },
  };
}
