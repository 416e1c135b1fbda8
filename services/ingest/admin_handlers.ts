/** IngestAdminService: migrations and the analytics part of the manifest. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { Code, publicError } from "../lib/errors.ts";
import type { ServiceContext } from "../lib/service_runtime.ts";
import { parseManifestOrRefuse } from "../lib/manifest/refuse.ts";
import type { IngestStore } from "./storage.ts";

export function ingestAdminHandlers(
  context: ServiceContext,
  store: IngestStore,
): ServiceImpl<typeof IngestAdminService> {
  return {
    async migrate() {
      const result = await context.migrate();
      return { appliedVersions: result.applied, currentVersion: result.current };
    },

    async importSite({ manifestJson, dryRun }) {
      const manifest = parseManifestOrRefuse(manifestJson);
      if (dryRun) return { siteId: manifest.site.id, changes: {} };
      // No event is recorded yet in this version, so no type has data.
      const changes = await store.importSite(manifest, () => Promise.resolve(false));
      return { siteId: manifest.site.id, changes };
    },

    async exportSite({ siteId }) {
      const part = await store.exportPart(siteId);
      if (!part) throw publicError(Code.NotFound, "site_not_found", { siteId });
      return { partJson: JSON.stringify(part) };
    },
  };
}
