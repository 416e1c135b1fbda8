/** content-service wiring: storage, the in-memory site cache, handlers. */
import { ContentService } from "../lib/gen/crm/content/v1/content_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { siteAdminHandlers } from "../lib/site_admin.ts";
import type { Platform } from "../lib/platform.ts";
import {
  type ListenOptions,
  type RunningService,
  runService,
  type ServiceDefinition,
} from "../lib/service_runtime.ts";
import { CONTENT_SCHEMA, contentMigrations } from "./migrations.ts";
import { ContentStore } from "./storage.ts";
import { SITE_CACHE_TTL_MS, SiteContentCache } from "./site_cache.ts";
import { contentHandlers } from "./handlers.ts";
import { contentSitePart } from "./admin_handlers.ts";

/**
 * content-service as a definition: its schema, the services it mounts and how
 * its handlers are built. `startContentService` serves it on a port; a test may
 * route its handlers through an in-memory transport.
 */
export function contentService(platform: Platform): ServiceDefinition {
  return {
    name: "content",
    schema: CONTENT_SCHEMA,
    migrations: contentMigrations,
    services: [ContentService, SiteAdminService],
    setup(context) {
      const store = new ContentStore(context.db);
      const cache = new SiteContentCache(store, platform.bus, platform.clock);
      return {
        routes(router) {
          router.service(
            ContentService,
            contentHandlers(cache, { freshForMs: SITE_CACHE_TTL_MS, clock: platform.clock }),
          );
          router.service(
            SiteAdminService,
            siteAdminHandlers(context, contentSitePart(store, platform.bus)),
          );
        },
        close() {
          cache.close();
          return Promise.resolve();
        },
      };
    },
  };
}

export function startContentService(
  platform: Platform,
  listen: ListenOptions,
): Promise<RunningService> {
  return runService(platform, contentService(platform), listen);
}
