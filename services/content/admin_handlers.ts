/** content-service's part of a site for crm.admin.v1.SiteAdminService; it has no other admin side. */
import type { Bus } from "../lib/bus.ts";
import type { SitePart } from "../lib/site_admin.ts";
import type { ContentStore } from "./storage.ts";

/** Languages, blog settings, pages, sections with their blocks, and posts. */
export function contentSitePart(store: ContentStore, bus: Bus): SitePart {
  return {
    async apply(manifest) {
      const siteId = manifest.site.id;
      const changes = await store.importSite(manifest);
      // Drops the site's copy here at once, and in every replica (and gateway) told.
      if (Object.keys(changes).length) await bus.publish("content-changed", siteId);
      return changes;
    },
    export: (siteId) => store.exportPart(siteId),
  };
}
