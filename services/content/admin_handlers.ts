/** ContentAdminService: migrations and the content part of the manifest. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ContentAdminService } from "../lib/gen/crm/content/v1/content_pb.ts";
import { Code, publicError } from "../lib/errors.ts";
import type { Bus } from "../lib/bus.ts";
import type { ServiceContext } from "../lib/service_runtime.ts";
import { parseManifestOrRefuse } from "../lib/manifest/refuse.ts";
import type { ContentStore } from "./storage.ts";
import type { SiteContentCache } from "./site_cache.ts";

export function contentAdminHandlers(
  context: ServiceContext,
  store: ContentStore,
  cache: SiteContentCache,
  bus: Bus,
): ServiceImpl<typeof ContentAdminService> {
  return {
    migrate: () => context.migrateRpc(),

    async importSite({ manifestJson, dryRun }) {
      const manifest = parseManifestOrRefuse(manifestJson);
      const siteId = manifest.site.id;
      if (dryRun) return { siteId, changes: {} };
      const changes = await store.importSite(manifest);
      if (Object.keys(changes).length) {
        cache.forget(siteId);
        await bus.publish("content-changed", siteId);
      }
      return { siteId, changes };
    },

    async exportSite({ siteId }) {
      const part = await store.exportPart(siteId);
      if (!part) throw publicError(Code.NotFound, "site_not_found", { siteId });
      return { partJson: JSON.stringify(part) };
    },
  };
}
