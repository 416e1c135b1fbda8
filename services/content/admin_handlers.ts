/**
 * content-service's part of a site for crm.admin.v1.SiteAdminService: languages,
 * blog settings, pages, sections with their blocks, posts, and the site's webhooks.
 */
import type { Bus } from "../lib/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { SitePart } from "../lib/site_admin.ts";
import type { ContentStore } from "./storage.ts";

export function contentSitePart(
  store: ContentStore,
  options: {
    bus: Bus;
    clock: Clock;
    /** Called after an import committed: its messages may be due. */
    enqueued(): void;
  },
): SitePart {
  return {
    async apply(manifest) {
      const siteId = manifest.site.id;
      const changes = await store.importSite(manifest, options.clock.now());
      options.enqueued();
      // Drops the site's copy here at once, and in every replica (and gateway) told.
      if (Object.keys(changes).length) await options.bus.publish("content-changed", siteId);
      return changes;
    },
    export: (siteId) => store.exportPart(siteId),
  };
}
