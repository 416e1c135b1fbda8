/** content-service wiring: storage, the in-memory site cache, handlers. */
import { ContentService } from "../lib/gen/crm/content/v1/content_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { siteAdminHandlers } from "../lib/site_admin.ts";
import type { Platform } from "../lib/platform.ts";
import { type ListenOptions, type RunningService, runService } from "../lib/service_runtime.ts";
import { CONTENT_SCHEMA, contentMigrations } from "./migrations.ts";
import { ContentStore } from "./storage.ts";
import { SiteContentCache } from "./site_cache.ts";
import { contentHandlers } from "./handlers.ts";
import { contentSitePart } from "./admin_handlers.ts";

/** Longest a replica that missed an invalidation message serves old content. */
const SITE_CACHE_TTL_MS = 30_000;

export function startContentService(
  platform: Platform,
  listen: ListenOptions,
): Promise<RunningService> {
  return runService(platform, {
    name: "content",
    schema: CONTENT_SCHEMA,
    migrations: contentMigrations,
    services: [ContentService, SiteAdminService],
    setup(context) {
      const store = new ContentStore(context.db);
      const cache = new SiteContentCache(store, SITE_CACHE_TTL_MS);
      const unsubscribe = platform.bus.subscribe(
        "content-changed",
        (siteId) => cache.forget(siteId),
      );
      return {
        routes(router) {
          router.service(ContentService, contentHandlers(cache, { freshForMs: SITE_CACHE_TTL_MS }));
          router.service(
            SiteAdminService,
            siteAdminHandlers(context, contentSitePart(store, cache, platform.bus)),
          );
        },
        close() {
          unsubscribe();
          return Promise.resolve();
        },
      };
    },
  }, listen);
}
