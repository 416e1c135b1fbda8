/** AuthAdminService: migrations, the site part of the manifest, keys. */
import type { ServiceImpl } from "@connectrpc/connect";
import { type AuthAdminService, KeyKind } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { Code, publicError } from "../lib/errors.ts";
import {
  generateKey,
  hashKey,
  KEY_HASH,
  type KeyKind as Kind,
  SECRET_KEY,
  SITE_KEY,
  storedKeyHash,
} from "../lib/keys.ts";
import { LIMITS } from "../lib/formats.ts";
import { invalidManifest, parseManifestOrRefuse } from "../lib/manifest/refuse.ts";
import type { Bus } from "../lib/bus.ts";
import type { ServiceContext } from "../lib/service_runtime.ts";
import type { AuthStore, SiteImport } from "./storage.ts";
import type { Resolver } from "./resolver.ts";

export function authAdminHandlers(
  context: ServiceContext,
  store: AuthStore,
  resolver: Resolver,
  bus: Bus,
): ServiceImpl<typeof AuthAdminService> {
  const forgetKey = async (keyHash: string) => {
    await resolver.forgetKey(keyHash);
    await bus.publish("key-changed", keyHash);
  };
  return {
    migrate: () => context.migrateRpc(),

    async importSite({ manifestJson, dryRun }) {
      const manifest = parseManifestOrRefuse(manifestJson);
      const plan: SiteImport = {
        siteId: manifest.site.id,
        name: manifest.site.name,
        domains: manifest.site.domains,
        siteKeyHashes: manifest.siteKeys.map(storedKeyHash),
        secretKeyHashes: manifest.secretKeys.map(storedKeyHash),
      };
      const [conflict] = await store.importConflicts(plan, LIMITS.maxSecretKeysActive);
      if (conflict) throw invalidManifest(conflict.path, conflict.problem);
      if (dryRun) return { siteId: plan.siteId, changes: {} };
      const applied = await store.applyImport(plan);
      for (const host of applied.hosts) {
        await resolver.forgetHost(host);
        await bus.publish("origin-changed", host);
      }
      for (const keyHash of applied.keyHashes) await forgetKey(keyHash);
      return { siteId: plan.siteId, changes: applied.changes };
    },

    async exportSite({ siteId }) {
      const site = await store.site(siteId);
      if (!site) throw publicError(Code.NotFound, "site_not_found", { siteId });
      const part = {
        site: { id: site.siteId, name: site.name, domains: site.domains },
        siteKeys: await store.activeKeys(siteId, "site"),
        secretKeys: await store.activeKeys(siteId, "secret"),
      };
      return { partJson: JSON.stringify(part) };
    },

    async listSites() {
      return { siteIds: await store.siteIds() };
    },

    async createKey({ siteId, kind }) {
      const k: Kind | undefined = kind === KeyKind.SITE
        ? "site"
        : kind === KeyKind.SECRET
        ? "secret"
        : undefined;
      if (!k) throw publicError(Code.InvalidArgument, "invalid_key_kind");
      const key = generateKey(k);
      const keyHash = hashKey(key);
      const max = k === "secret" ? LIMITS.maxSecretKeysActive : Number.MAX_SAFE_INTEGER;
      const outcome = await store.createKey(siteId, k, keyHash, max);
      if (outcome === "no_site") throw publicError(Code.NotFound, "site_not_found", { siteId });
      if (outcome === "limit") {
        throw publicError(Code.FailedPrecondition, "too_many_secret_keys", { max });
      }
      await forgetKey(keyHash);
      return { key, keyHash };
    },

    async revokeKey({ key }) {
      if (!SITE_KEY.test(key) && !SECRET_KEY.test(key) && !KEY_HASH.test(key)) {
        throw publicError(Code.InvalidArgument, "invalid_key_format");
      }
      const keyHash = storedKeyHash(key);
      const revoked = await store.revokeKey(keyHash);
      if (!revoked) throw publicError(Code.NotFound, "key_not_found");
      await forgetKey(keyHash);
      return { keyHash, siteId: revoked.siteId, alreadyRevoked: revoked.alreadyRevoked };
    },
  };
}
