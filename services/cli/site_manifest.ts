/**
 * Importing and exporting a whole site manifest across the three services
 * that own its parts (each through its crm.admin.v1.SiteAdminService). An
 * import is checked whole first (locally, then by a dry run in every service
 * against what it stores) and written only when every part passed, so a
 * refused manifest stores nothing.
 */
import { ManifestError, parseManifest } from "../lib/manifest/validate.ts";
import { reasonOf } from "../lib/errors.ts";
import { SITE_SERVICES, type SiteAdminClients, type SiteService } from "./admin_clients.ts";

export interface ImportReport {
  site: string;
  changed: boolean;
  changes: Record<SiteService, Record<string, number>>;
}

export async function importManifest(
  clients: SiteAdminClients,
  manifestJson: string,
): Promise<ImportReport> {
  const manifest = parseManifest(manifestJson);
  const request = { manifestJson, dryRun: true };
  try {
    for (const service of SITE_SERVICES) await clients[service].importSite(request);
  } catch (error) {
    // A service's refusal reads like the local validator's: the path and the problem.
    const fields = reasonOf(error)?.detail.fields;
    if (fields?.case === "manifestProblem") {
      throw new ManifestError(fields.value.path, fields.value.problem);
    }
    throw error;
  }
  const apply = { manifestJson, dryRun: false };
  // auth first: the site and its keys exist before its content is reachable.
  const changes = {} as ImportReport["changes"];
  for (const service of SITE_SERVICES) {
    changes[service] = (await clients[service].importSite(apply)).changes;
  }
  const changed = Object.values(changes).some((c) => Object.keys(c).length > 0);
  return { site: manifest.site.id, changed, changes };
}

/** The manifest's members, and those of its site object, in the order of the contract. */
const MANIFEST_ORDER = [
  "site",
  "siteKeys",
  "secretKeys",
  "blog",
  "pages",
  "sections",
  "posts",
  "eventTypes",
];
const SITE_ORDER = ["id", "name", "timeZone", "languages", "domains"];

type Json = Record<string, unknown>;

/** The object with the keys of `order` first, in that order, then any others. */
function ordered(object: Json, order: readonly string[]): Json {
  const out: Json = {};
  for (const key of order) if (Object.hasOwn(object, key)) out[key] = object[key];
  for (const [key, value] of Object.entries(object)) if (!Object.hasOwn(out, key)) out[key] = value;
  return out;
}

/** One manifest from the services' parts: their members side by side, their site members merged. */
export function mergeManifestParts(parts: readonly Json[]): Json {
  const site: Json = {};
  const members: Json = {};
  for (const { site: siteMembers, ...rest } of parts) {
    Object.assign(site, siteMembers);
    Object.assign(members, rest);
  }
  return ordered({ site: ordered(site, SITE_ORDER), ...members }, MANIFEST_ORDER);
}

/** The site's manifest as the services store it, keys as hashes, in the contract's field order. */
export async function exportManifest(clients: SiteAdminClients, siteId: string): Promise<Json> {
  const parts: Json[] = [];
  for (const service of SITE_SERVICES) {
    parts.push(JSON.parse((await clients[service].exportSite({ siteId })).manifestJson));
  }
  return mergeManifestParts(parts);
}
