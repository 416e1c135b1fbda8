/**
 * crm.admin.v1.SiteAdminService, the one site administration every service
 * that stores part of a site serves: migrations, and its part of the site
 * manifest (import with a dry run, export). A service supplies only what is
 * its own: how to check, store and read back its part.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { SiteAdminService } from "./gen/crm/admin/v1/site_admin_pb.ts";
import { Code, publicError, siteNotFound } from "./errors.ts";
import { parseManifestOrRefuse } from "./manifest/refuse.ts";
import type { Manifest } from "./manifest/types.ts";
import type { ServiceContext } from "./service_runtime.ts";

/** A service's part of a site. */
export interface SitePart {
  /**
   * The dry run: refuses (invalid_manifest, naming the JSON path) what the
   * manifest cannot do against what the service stores, and writes nothing.
   */
  check?(manifest: Manifest): Promise<void>;
  /**
   * Makes the stored part equal to the manifest's in one transaction (with
   * check's refusals made inside it, so nothing is written when one applies)
   * and answers the counts of what changed, empty when nothing did: applying
   * the same manifest again changes nothing. So an import stopped before or
   * after this step leaves the part all old or all new.
   */
  apply(manifest: Manifest): Promise<Record<string, number>>;
  /** The service's members of the site's manifest; undefined when it stores no such site. */
  export(siteId: string): Promise<Record<string, unknown> | undefined>;
}

export function siteAdminHandlers(
  context: ServiceContext,
  part: SitePart,
): ServiceImpl<typeof SiteAdminService> {
  return {
    migrate: () => context.migrateRpc(),
    migrationStatus: () => context.migrationStatus(),

    async importSite({ manifestJson, dryRun }) {
      const manifest = parseManifestOrRefuse(manifestJson, {
        allowInsecureWebhooks: context.platform.config.webhooks.allowInsecure,
      });
      const siteId = manifest.site.id;
      if (!dryRun) return { siteId, changes: await part.apply(manifest) };
      await part.check?.(manifest);
      return { siteId, changes: {} };
    },

    async exportSite({ siteId }) {
      const members = await part.export(siteId);
      if (!members) throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      return { manifestJson: JSON.stringify(members) };
    },
  };
}
