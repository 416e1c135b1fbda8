/** auth-service wiring: storage, resolver, handlers, invalidation subscriptions. */
import { AuthAdminService, AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { siteAdminHandlers } from "../lib/site_admin.ts";
import type { Platform } from "../lib/platform.ts";
import {
  type ListenOptions,
  type RunningService,
  runService,
  type ServiceDefinition,
} from "../lib/service_runtime.ts";
import { AUTH_SCHEMA, authMigrations } from "./migrations/mod.ts";
import { AuthStore } from "./storage.ts";
import { Resolver } from "./resolver.ts";
import { authHandlers } from "./handlers.ts";
import { authAdminHandlers, authSitePart } from "./admin_handlers.ts";
import { ShareStore } from "./share_store.ts";
import { shareAdminHandlers, shareHandlers } from "./share_handlers.ts";
import { publicUrlOf } from "../lib/config.ts";

/**
 * auth-service as a definition: its schema, the services it mounts and how
 * its handlers are built. `startAuthService` serves it on a port; a test may
 * route its handlers through an in-memory transport.
 */
export function authService(platform: Platform): ServiceDefinition {
  return {
    name: "auth",
    schema: AUTH_SCHEMA,
    migrations: authMigrations,
    services: [AuthService, AuthAdminService, SiteAdminService],
    setup(context) {
      const store = new AuthStore(context.db);
      const shares = new ShareStore(context.db);
      const resolver = new Resolver(store, shares, {
        ttlMs: platform.config.keyCacheTtlS * 1000,
        redis: platform.redis,
        keyPrefix: platform.config.redisKeyPrefix,
        log: context.platform.log,
        clock: platform.clock,
        bus: platform.bus,
      });
      return {
        routes(router) {
          router.service(AuthService, {
            ...authHandlers(resolver),
            ...shareHandlers(resolver, platform.clock),
          });
          router.service(AuthAdminService, {
            ...authAdminHandlers(store, resolver, platform.bus),
            ...shareAdminHandlers({
              store: shares,
              sites: store,
              resolver,
              bus: platform.bus,
              clock: platform.clock,
              publicUrl: () => publicUrlOf(platform.config),
            }),
          });
          router.service(
            SiteAdminService,
            siteAdminHandlers(context, authSitePart(store, resolver, platform.bus)),
          );
        },
        close() {
          resolver.close();
          return Promise.resolve();
        },
      };
    },
  };
}

export function startAuthService(
  platform: Platform,
  listen: ListenOptions,
): Promise<RunningService> {
  return runService(platform, authService(platform), listen);
}
