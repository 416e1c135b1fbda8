/**
 * Importing and exporting a whole site manifest across the three services
 * that own its parts. An import is checked whole first (locally, then by a
 * dry run in every service against what it stores) and written only when
 * every part passed, so a refused manifest stores nothing.
 */
import { ManifestError, parseManifest } from "../lib/manifest/validate.ts";
import { reasonOf } from "../lib/errors.ts";
import type { AdminClients } from "./admin_clients.ts";

export interface ImportReport {
  site: string;
  changed: boolean;
  changes: {
    auth: Record<string, number>;
    content: Record<string, number>;
    ingest: Record<string, number>;
  };
}

export async function importManifest(
  clients: AdminClients,
  manifestJson: string,
): Promise<ImportReport> {
  const manifest = parseManifest(manifestJson);
  const request = { manifestJson, dryRun: true };
  try {
    await clients.auth.importSite(request);
    await clients.content.importSite(request);
    await clients.ingest.importSite(request);
  } catch (error) {
    // A service's refusal reads like the local validator's: the path and the problem.
    const reason = reasonOf(error);
    if (reason?.reason === "invalid_manifest") {
      throw new ManifestError(String(reason.fields.path), String(reason.fields.problem));
    }
    throw error;
  }
  const apply = { manifestJson, dryRun: false };
  // auth first: the site and its keys exist before its content is reachable.
  const auth = await clients.auth.importSite(apply);
  const content = await clients.content.importSite(apply);
  const ingest = await clients.ingest.importSite(apply);
  const changes = { auth: auth.changes, content: content.changes, ingest: ingest.changes };
  const changed = Object.values(changes).some((c) => Object.keys(c).length > 0);
  return { site: manifest.site.id, changed, changes };
}

/** The site's manifest as the services store it, keys as hashes, in the contract's field order. */
export async function exportManifest(
  clients: AdminClients,
  siteId: string,
): Promise<Record<string, unknown>> {
  const auth = JSON.parse((await clients.auth.exportSite({ siteId })).partJson);
  const content = JSON.parse((await clients.content.exportSite({ siteId })).partJson);
  const ingest = JSON.parse((await clients.ingest.exportSite({ siteId })).partJson);
  return {
    site: {
      id: auth.site.id,
      name: auth.site.name,
      timeZone: ingest.timeZone,
      languages: content.languages,
      domains: auth.site.domains,
    },
    siteKeys: auth.siteKeys,
    secretKeys: auth.secretKeys,
    blog: content.blog,
    pages: content.pages,
    sections: content.sections,
    posts: content.posts,
    eventTypes: ingest.eventTypes,
  };
}
