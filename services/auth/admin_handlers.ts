/**
 * auth-service's operator side: its part of a site (the site, its domains and
 * keys) for crm.admin.v1.SiteAdminService, and AuthAdminService (sites, keys).
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { type AuthAdminService, KeyKind } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { Code, limit, publicError, siteNotFound } from "../lib/errors.ts";
import {
  generateKey,
  hashKey,
  KEY_FORMATS,
  KEY_HASH,
  type KeyKind as Kind,
  storedKeyHash,
} from "../lib/keys.ts";
import { LIMITS } from "../lib/formats.ts";
import { invalidManifest } from "../lib/manifest/refuse.ts";
import type { Manifest } from "../lib/manifest/types.ts";
import type { Bus } from "../lib/bus.ts";
import type { SitePart } from "../lib/site_admin.ts";
import type { AuthStore, SiteImport } from "./storage.ts";
import type { Resolver } from "./resolver.ts";

/**
 * Drops every cached answer about a key (by its hash) or a share link (by its
 * id), here and (through the bus) everywhere.
 */
export async function forgetKey(resolver: Resolver, bus: Bus, keyHash: string) {
  await resolver.forgetKey(keyHash);
  await bus.publish("key-changed", keyHash);
}

function importPlan(manifest: Manifest): SiteImport {
  return {
    siteId: manifest.site.id,
    name: manifest.site.name,
    domains: manifest.site.domains,
    embedOrigins: manifest.site.embedOrigins,
    siteKeyHashes: manifest.siteKeys.map(storedKeyHash),
    secretKeyHashes: manifest.secretKeys.map(storedKeyHash),
    reportKeyHashes: manifest.reportKeys.map(storedKeyHash),
    previewKeyHashes: manifest.previewKeys.map(storedKeyHash),
  };
}

/**
 * The site, its domains and its keys: the members site.id, site.name,
 * site.domains, siteKeys, secretKeys, reportKeys, previewKeys.
 */
export function authSitePart(store: AuthStore, resolver: Resolver, bus: Bus): SitePart {
  return {
    async check(manifest) {
      const [conflict] = await store.importConflicts(
        importPlan(manifest),
        LIMITS.maxSecretKeysActive,
      );
      if (conflict) throw invalidManifest(conflict.path, conflict.problem);
    },

    async apply(manifest) {
      const applied = await store.applyImport(importPlan(manifest), LIMITS.maxSecretKeysActive);
      if (applied.conflict) throw invalidManifest(applied.conflict.path, applied.conflict.problem);
      for (const host of applied.hosts) {
        await resolver.forgetHost(host);
        await bus.publish("origin-changed", host);
      }
      for (const keyHash of applied.keyHashes) await forgetKey(resolver, bus, keyHash);
      for (const id of applied.shareIds) await forgetKey(resolver, bus, id);
      return applied.changes;
    },

    async export(siteId) {
      const site = await store.site(siteId);
      if (!site) return undefined;
      const previewKeys = await store.activeKeys(siteId, "preview");
      return {
        site: {
          id: site.siteId,
          name: site.name,
          domains: site.domains,
          ...(site.embedOrigins.length ? { embedOrigins: site.embedOrigins } : {}),
        },
        siteKeys: await store.activeKeys(siteId, "site"),
        secretKeys: await store.activeKeys(siteId, "secret"),
        reportKeys: await store.activeKeys(siteId, "report"),
        // Optional in a manifest: absent when the site has none.
        ...(previewKeys.length ? { previewKeys } : {}),
      };
    },
  };
}

const KINDS: Partial<Record<KeyKind, Kind>> = {
  [KeyKind.SITE]: "site",
  [KeyKind.SECRET]: "secret",
  [KeyKind.REPORT]: "report",
  [KeyKind.PREVIEW]: "preview",
};

export function authAdminHandlers(
  store: AuthStore,
  resolver: Resolver,
  bus: Bus,
): Omit<
  ServiceImpl<typeof AuthAdminService>,
  "createShareLink" | "listShareLinks" | "revokeShareLink"
> {
  return {
    async listSites() {
      return { siteIds: await store.siteIds() };
    },

    async createKey({ siteId, kind }) {
      const k: Kind | undefined = KINDS[kind];
      if (!k) throw publicError(Code.InvalidArgument, "invalid_key_kind");
      const key = generateKey(k);
      const keyHash = hashKey(key);
      const max = k === "secret" ? LIMITS.maxSecretKeysActive : Number.MAX_SAFE_INTEGER;
      const outcome = await store.createKey({ siteId, kind: k, keyHash, maxActive: max });
      if (outcome === "no_site") {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      }
      if (outcome === "limit") {
        throw publicError(Code.FailedPrecondition, "too_many_secret_keys", limit(max));
      }
      await forgetKey(resolver, bus, keyHash);
      return { key, keyHash };
    },

    async revokeKey({ key }) {
      const formats = Object.values(KEY_FORMATS).map((f) => f.pattern);
      if (![...formats, KEY_HASH].some((format) => format.test(key))) {
        throw publicError(Code.InvalidArgument, "invalid_key_format");
      }
      const keyHash = storedKeyHash(key);
      const revoked = await store.revokeKey(keyHash);
      if (!revoked) throw publicError(Code.NotFound, "key_not_found");
      await forgetKey(resolver, bus, keyHash);
      return { keyHash, siteId: revoked.siteId, alreadyRevoked: revoked.alreadyRevoked };
    },
  };
}
