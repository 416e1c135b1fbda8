/** Auth-service tables: sites, their domains, and hashed keys. */
import type { Database, Queryable } from "../lib/db/mod.ts";
import type { KeyKind } from "../lib/keys.ts";
import { canonicalHost } from "../lib/formats.ts";

export interface KeyRecord {
  keyHash: string;
  siteId: string;
  kind: KeyKind;
  revoked: boolean;
}

export interface SiteRecord {
  siteId: string;
  name: string;
  domains: string[];
  embedOrigins: string[];
}

export interface SiteImport {
  siteId: string;
  name: string;
  domains: string[];
  /** site.embedOrigins: the origins that may frame the site's shared page. */
  embedOrigins: string[];
  siteKeyHashes: string[];
  secretKeyHashes: string[];
  reportKeyHashes: string[];
  previewKeyHashes: string[];
}

export interface ImportConflict {
  path: string;
  problem: string;
}

/** jsonb's text (`["a", "b"]`) as JSON.stringify writes it, to compare lists. */
function canonicalJson(text: string): string {
  return JSON.stringify(JSON.parse(text));
}

export class AuthStore {
  constructor(private readonly db: Database) {}

  async keyByHash(keyHash: string, q: Queryable = this.db): Promise<KeyRecord | undefined> {
    const rows = await q.query<{ site_id: string; kind: KeyKind; revoked: boolean }>(
      "select site_id, kind, revoked_at is not null as revoked from auth.keys where key_hash = $1",
      [keyHash],
    );
    const row = rows[0];
    return row && { keyHash, siteId: row.site_id, kind: row.kind, revoked: row.revoked };
  }

  async siteForHost(host: string): Promise<string | undefined> {
    const rows = await this.db.query<{ site_id: string }>(
      "select site_id from auth.site_domains where host = $1",
      [host],
    );
    return rows[0]?.site_id;
  }

  async site(siteId: string): Promise<SiteRecord | undefined> {
    const rows = await this.db.query<{ name: string; embed_origins: string }>(
      "select name, embed_origins::text as embed_origins from auth.sites where site_id = $1",
      [siteId],
    );
    if (!rows[0]) return undefined;
    const domains = await this.db.query<{ domain: string }>(
      "select domain from auth.site_domains where site_id = $1 order by position",
      [siteId],
    );
    return {
      siteId,
      name: rows[0].name,
      domains: domains.map((d) => d.domain),
      embedOrigins: JSON.parse(rows[0].embed_origins),
    };
  }

  async siteIds(): Promise<string[]> {
    const rows = await this.db.query<{ site_id: string }>(
      "select site_id from auth.sites order by site_id",
    );
    return rows.map((r) => r.site_id);
  }

  /** Active key hashes of a site and kind, oldest first. */
  async activeKeys(siteId: string, kind: KeyKind, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ key_hash: string }>(
      `select key_hash from auth.keys
        where site_id = $1 and kind = $2 and revoked_at is null
        order by created_at, key_hash`,
      [siteId, kind],
    );
    return rows.map((r) => r.key_hash);
  }

  /** Faults the import would meet against what is stored, in manifest order. */
  async importConflicts(
    plan: SiteImport,
    maxSecretKeys: number,
    q: Queryable = this.db,
  ): Promise<ImportConflict[]> {
    // A domain held by another site is not a fault: the import moves it here.
    const conflicts: ImportConflict[] = [];
    const lists: [KeyKind, string[], string][] = [
      ["site", plan.siteKeyHashes, "$.siteKeys"],
      ["secret", plan.secretKeyHashes, "$.secretKeys"],
      ["report", plan.reportKeyHashes, "$.reportKeys"],
      ["preview", plan.previewKeyHashes, "$.previewKeys"],
    ];
    for (const [kind, hashes, path] of lists) {
      for (const [i, hash] of hashes.entries()) {
        const existing = await this.keyByHash(hash, q);
        if (existing && existing.siteId !== plan.siteId) {
          conflicts.push({ path: `${path}[${i}]`, problem: "belongs to another site" });
        } else if (existing && existing.kind !== kind) {
          conflicts.push({ path: `${path}[${i}]`, problem: `is stored as a ${existing.kind} key` });
        }
      }
    }
    const active = new Set(await this.activeKeys(plan.siteId, "secret", q));
    for (const hash of plan.secretKeyHashes) {
      const existing = await this.keyByHash(hash, q);
      if (!existing) active.add(hash);
    }
    if (active.size > maxSecretKeys) {
      conflicts.push({
        path: "$.secretKeys",
        problem: `the site would have ${active.size} active secret keys; at most ${maxSecretKeys}`,
      });
    }
    return conflicts;
  }

  /**
   * In one transaction, checks the import against what is stored (as
   * importConflicts, with the site row locked so a key created meanwhile is
   * counted) and, when nothing conflicts, upserts the site, makes its domains
   * those listed, and adds listed keys that are absent. Returns the first
   * conflict and nothing written, or counts of what changed and the hosts and
   * key hashes whose cached answers must be forgotten.
   */
  async applyImport(plan: SiteImport, maxSecretKeys: number): Promise<
    { conflict: ImportConflict } | {
      conflict?: undefined;
      changes: Record<string, number>;
      hosts: string[];
      keyHashes: string[];
      /** Share links whose cached answers (embed origins) must be forgotten. */
      shareIds: string[];
    }
  > {
    return await this.db.transaction(async (tx) => {
      const changes: Record<string, number> = {};
      const existing = await tx.query<{ name: string; embed_origins: string }>(
        "select name, embed_origins::text as embed_origins from auth.sites where site_id = $1 for update",
        [plan.siteId],
      );
      const [conflict] = await this.importConflicts(plan, maxSecretKeys, tx);
      if (conflict) return { conflict };
      if (!existing[0]) {
        await tx.query("insert into auth.sites (site_id, name) values ($1, $2)", [
          plan.siteId,
          plan.name,
        ]);
        changes.site = 1;
      } else if (existing[0].name !== plan.name) {
        await tx.query("update auth.sites set name = $2, updated_at = now() where site_id = $1", [
          plan.siteId,
          plan.name,
        ]);
        changes.site = 1;
      }
      const shareIds: string[] = [];
      const origins = JSON.stringify(plan.embedOrigins);
      if (origins !== (existing[0] ? canonicalJson(existing[0].embed_origins) : "[]")) {
        await tx.query("update auth.sites set embed_origins = $2::jsonb where site_id = $1", [
          plan.siteId,
          origins,
        ]);
        changes.embedOrigins = plan.embedOrigins.length;
        const links = await tx.query<{ id: string }>(
          "select id from auth.share_links where site_id = $1",
          [plan.siteId],
        );
        shareIds.push(...links.map((l) => l.id));
      }

      const stored = await tx.query<{ host: string; domain: string }>(
        "select host, domain from auth.site_domains where site_id = $1 order by position",
        [plan.siteId],
      );
      const wanted = plan.domains.map((domain) => ({ host: canonicalHost(domain), domain }));
      const same = stored.length === wanted.length &&
        stored.every((s, i) => s.host === wanted[i].host && s.domain === wanted[i].domain);
      const hosts = new Set<string>();
      if (!same) {
        stored.forEach((s) => hosts.add(s.host));
        await tx.query("delete from auth.site_domains where site_id = $1", [plan.siteId]);
        for (const [position, w] of wanted.entries()) {
          hosts.add(w.host);
          const [previous] = await tx.query<{ site_id: string }>(
            "delete from auth.site_domains where host = $1 returning site_id",
            [w.host],
          );
          if (previous) {
            changes.domainsMovedFromOtherSites = (changes.domainsMovedFromOtherSites ?? 0) + 1;
          }
          await tx.query(
            "insert into auth.site_domains (host, site_id, domain, position) values ($1, $2, $3, $4)",
            [w.host, plan.siteId, w.domain, position],
          );
        }
        changes.domains = wanted.length;
      }

      const keyHashes: string[] = [];
      const lists: [KeyKind, string[], string][] = [
        ["site", plan.siteKeyHashes, "siteKeys"],
        ["secret", plan.secretKeyHashes, "secretKeys"],
        ["report", plan.reportKeyHashes, "reportKeys"],
        ["preview", plan.previewKeyHashes, "previewKeys"],
      ];
      for (const [kind, hashes, label] of lists) {
        for (const hash of hashes) {
          const inserted = await tx.query(
            `insert into auth.keys (key_hash, site_id, kind) values ($1, $2, $3)
             on conflict (key_hash) do nothing returning key_hash`,
            [hash, plan.siteId, kind],
          );
          if (inserted.length) {
            changes[label] = (changes[label] ?? 0) + 1;
            keyHashes.push(hash);
          }
        }
      }
      return { changes, hosts: [...hosts], keyHashes, shareIds };
    });
  }

  /** Creates a key unless the site would pass the active-key limit; locks the site row. */
  async createKey(
    { siteId, kind, keyHash, maxActive }: {
      siteId: string;
      kind: KeyKind;
      keyHash: string;
      /** The most keys of this kind active at once on the site. */
      maxActive: number;
    },
  ): Promise<"created" | "no_site" | "limit"> {
    return await this.db.transaction(async (tx) => {
      const site = await tx.query("select 1 from auth.sites where site_id = $1 for update", [
        siteId,
      ]);
      if (!site.length) return "no_site";
      if ((await this.activeKeys(siteId, kind, tx)).length >= maxActive) return "limit";
      await tx.query("insert into auth.keys (key_hash, site_id, kind) values ($1, $2, $3)", [
        keyHash,
        siteId,
        kind,
      ]);
      return "created";
    });
  }

  /** Marks a key revoked; reports whether it was already. */
  async revokeKey(
    keyHash: string,
  ): Promise<{ siteId: string; alreadyRevoked: boolean } | undefined> {
    return await this.db.transaction(async (tx) => {
      const rows = await tx.query<{ site_id: string; revoked: boolean }>(
        "select site_id, revoked_at is not null as revoked from auth.keys where key_hash = $1 for update",
        [keyHash],
      );
      if (!rows[0]) return undefined;
      if (!rows[0].revoked) {
        await tx.query("update auth.keys set revoked_at = now() where key_hash = $1", [keyHash]);
      }
      return { siteId: rows[0].site_id, alreadyRevoked: rows[0].revoked };
    });
  }
}
