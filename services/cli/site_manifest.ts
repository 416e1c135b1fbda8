/**
 * Importing and exporting a whole site manifest across the three services
 * that own its parts (each through its crm.admin.v1.SiteAdminService).
 *
 * An import runs in two passes. The check: the manifest is validated
 * locally, then by a dry run in every service against what it stores; a
 * refusal, or a service that cannot be reached, stops the import before
 * anything is written anywhere. The apply: service by service, each in one
 * transaction that makes its part equal to the manifest's (and so changes
 * nothing the second time). A run stopped between two applies (a service
 * down) leaves every service with its whole old part or its whole new one;
 * running the same import again applies what is missing and reports only
 * that (`ImportIncompleteError` says which services have it).
 */
import { ManifestError, parseManifest } from "../lib/manifest/validate.ts";
import { describeError, reasonOf } from "../lib/errors.ts";
import { SITE_SERVICES, type SiteAdminClients, type SiteService } from "./admin_clients.ts";

export interface ImportReport {
  site: string;
  changed: boolean;
  changes: Record<SiteService, Record<string, number>>;
}

/** An apply step failed after others had stored the manifest: running the import again completes it. */
export class ImportIncompleteError extends Error {
  override name = "ImportIncompleteError";
  constructor(
    /** The services that have the new manifest. */
    readonly applied: SiteService[],
    /** The services that still have the old one, the first of them the one that failed. */
    readonly pending: SiteService[],
    override readonly cause: unknown,
  ) {
    super(
      `${pending[0]} did not store the manifest (${describeError(cause)}); ` +
        `${applied.join(" and ")} stored it, ${pending.join(" and ")} did not: ` +
        "run the same import again to complete it",
    );
  }
}

/** A service's refusal of the manifest reads like the local validator's: the path and the problem. */
function asManifestError(error: unknown): unknown {
  const fields = reasonOf(error)?.detail.fields;
  return fields?.case === "manifestProblem"
    ? new ManifestError(fields.value.path, fields.value.problem)
    : error;
}

export async function importManifest(
  clients: SiteAdminClients,
  manifestJson: string,
): Promise<ImportReport> {
  // Whether a webhook may use http is the services' setting (WEBHOOK_ALLOW_INSECURE, where
  // they run and deliver): their dry run decides it, with the same path and problem.
  const manifest = parseManifest(manifestJson, { allowInsecureWebhooks: true });
  try {
    for (const service of SITE_SERVICES) {
      await clients[service].importSite({ manifestJson, dryRun: true });
    }
  } catch (error) {
    throw asManifestError(error);
  }
  // auth first: the site and its keys exist before its content is reachable.
  const changes = {} as ImportReport["changes"];
  const applied: SiteService[] = [];
  for (const [step, service] of SITE_SERVICES.entries()) {
    try {
      changes[service] = (await clients[service].importSite({ manifestJson })).changes;
    } catch (error) {
      if (step === 0) throw asManifestError(error);
      throw new ImportIncompleteError(applied, SITE_SERVICES.slice(step), error);
    }
    applied.push(service);
  }
  const changed = Object.values(changes).some((c) => Object.keys(c).length > 0);
  return { site: manifest.site.id, changed, changes };
}

/** The manifest's members, and those of its site object, in the order of the contract. */
export const MANIFEST_ORDER = [
  "site",
  "siteKeys",
  "secretKeys",
  "reportKeys",
  "blog",
  "pages",
  "sections",
  "posts",
  "eventTypes",
  "webhooks",
  "notifications",
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
