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
import { CONTENT_SCHEMA, contentMigrations } from "./migrations/mod.ts";
import { ContentStore } from "./storage.ts";
import { SITE_CACHE_TTL_MS, SiteContentCache } from "./site_cache.ts";
import { contentHandlers } from "./handlers.ts";
import { contentSitePart } from "./admin_handlers.ts";
import { WebhookAdminService } from "../lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import { webhookAdminHandlers } from "../lib/webhooks/admin.ts";
import { WebhookWorker } from "../lib/webhooks/worker.ts";

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
    services: [ContentService, SiteAdminService, WebhookAdminService],
    setup(context) {
      const store = new ContentStore(context.db);
      const cache = new SiteContentCache(store, platform.bus, platform.clock);
      // Delivers content.published and post.published from this schema's outbox.
      const webhooks = new WebhookWorker({
        db: context.db,
        schema: CONTENT_SCHEMA,
        clock: platform.clock,
        log: context.platform.log,
        settings: platform.config.webhooks,
      });
      webhooks.start();
      return {
        routes(router) {
          router.service(
            ContentService,
            contentHandlers(cache, {
              freshForMs: SITE_CACHE_TTL_MS,
              clock: platform.clock,
              changesSince: (siteId, window) => store.changesSince(siteId, window),
            }),
          );
          router.service(
            SiteAdminService,
            siteAdminHandlers(
              context,
              contentSitePart(store, {
                bus: platform.bus,
                clock: platform.clock,
                enqueued: () => webhooks.nudge(),
              }),
            ),
          );
          router.service(
            WebhookAdminService,
            webhookAdminHandlers({
              db: context.db,
              schema: CONTENT_SCHEMA,
              siteExists: (siteId) => store.siteExists(siteId),
            }),
          );
        },
        async close() {
          await webhooks.close();
          cache.close();
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
