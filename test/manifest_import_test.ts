/**
 * Site manifest import and export through the services' admin RPCs, on
 * every storage: idempotent, whole or nothing, keys only as hashes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import { exportManifest, importManifest } from "../services/cli/site_manifest.ts";
import { hashKey } from "../services/lib/keys.ts";
import { ManifestError } from "../services/lib/manifest/validate.ts";

// deno-lint-ignore no-explicit-any
type Manifest = Record<string, any>;

describe.each(SYSTEM_STORAGES)("manifest import on %s", (storage) => {
  let sys: TestSystem;
  let example: Manifest;

  beforeAll(async () => {
    example = await readFixture("contract-example.json") as Manifest;
    sys = await startTestSystem({ storage });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("imports the contract example, and a second import changes nothing", async () => {
    const first = await importManifest(sys.system.admin, JSON.stringify(example));
    expect(first.changed).toBe(true);
    expect(first.changes.auth).toMatchObject({ site: 1, siteKeys: 1, secretKeys: 1 });
    const exported = await exportManifest(sys.system.admin, "demo");
    const second = await importManifest(sys.system.admin, JSON.stringify(example));
    expect(second).toEqual({
      site: "demo",
      changed: false,
      changes: { auth: {}, content: {}, ingest: {} },
    });
    expect(await exportManifest(sys.system.admin, "demo")).toEqual(exported);
  });

  it("exports every field, with key hashes instead of keys", async () => {
    const exported = await exportManifest(sys.system.admin, "demo") as Manifest;
    expect(exported.site).toEqual(example.site);
    expect(exported.siteKeys).toEqual([hashKey(example.siteKeys[0])]);
    expect(exported.secretKeys).toEqual([hashKey(example.secretKeys[0])]);
    expect(exported.blog).toEqual(example.blog);
    expect(exported.pages).toEqual(example.pages.map((p: Manifest) => ({
      ...p,
      sections: p.sections.map((s: Manifest) => ({
        ...s,
        blocks: s.blocks.map((b: Manifest) => ({ multilang: false, ...b })),
      })),
    })));
    expect(exported.sections).toEqual(example.sections);
    expect(exported.posts).toEqual([{
      ...example.posts[0],
      publishedAt: "2026-01-10T09:00:00.000Z",
      createdAt: "2026-01-09T09:00:00.000Z",
    }]);
    expect(exported.eventTypes).toEqual(example.eventTypes);
    expect(JSON.stringify(exported)).not.toContain(example.siteKeys[0]);
  });

  it("stores keys only as hashes", async () => {
    const rows = await sys.system.platform.db!.query<{ key_hash: string }>(
      "select key_hash from auth.keys",
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.key_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const dump = JSON.stringify(await sys.system.platform.db!.query("select * from auth.keys"));
    expect(dump).not.toContain(example.siteKeys[0]);
    expect(dump).not.toContain(example.secretKeys[0]);
  });

  it("re-imports its own export (hashed keys included) without a change", async () => {
    const exported = await exportManifest(sys.system.admin, "demo");
    const again = await importManifest(sys.system.admin, JSON.stringify(exported));
    expect(again.changed).toBe(false);
  });

  it("updates what changed and keeps unchanged blocks' ids and times", async () => {
    const before = await (await sys.get("/content/v1/sections/hero", {
      headers: { "x-crm-key": example.siteKeys[0] },
    })).json();
    const changed = structuredClone(example);
    changed.pages[0].sections[0].blocks[0].content = { en: "Welcome", de: "Willkommen" };
    const report = await importManifest(sys.system.admin, JSON.stringify(changed));
    expect(report.changes.content).toEqual({ blocksChanged: 1 });
    const after = await (await sys.get("/content/v1/sections/hero", {
      headers: { "x-crm-key": example.siteKeys[0] },
    })).json();
    expect(after.content.title.content).toEqual({ en: "Welcome", de: "Willkommen" });
    expect(after.content.title.id).toBe(before.content.title.id);
    expect(after.content.cover).toEqual(before.content.cover);
    expect(Date.parse(after.content.title.updatedAt)).toBeGreaterThan(
      Date.parse(before.content.title.updatedAt),
    );
    await importManifest(sys.system.admin, JSON.stringify(example));
  });

  it("cleans blog HTML on import", async () => {
    const dirty = structuredClone(example);
    dirty.posts[0].body = { en: '<p onclick="steal()">Hi</p><script>alert(1)</script>' };
    await importManifest(sys.system.admin, JSON.stringify(dirty));
    const exported = await exportManifest(sys.system.admin, "demo") as Manifest;
    expect(exported.posts[0].body).toEqual({ en: "<p>Hi</p>" });
    await importManifest(sys.system.admin, JSON.stringify(example));
  });

  it("refuses a faulty manifest whole, naming the path, and stores nothing of it", async () => {
    const bad = structuredClone(example);
    bad.site.id = "other";
    bad.site.domains = ["other.example"];
    bad.pages[0].sections[0].blocks[0].content = { en: "Changed" };
    // A key of another site: refused by auth-service's dry run, after local validation passed.
    const error = await importManifest(sys.system.admin, JSON.stringify(bad)).catch((e) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error.path).toBe("$.siteKeys[0]");
    expect(error.problem).toBe("belongs to another site");
    expect((await sys.system.admin.auth.listSites({})).siteIds).toEqual(["demo"]);
    await expect(sys.system.admin.content.exportSite({ siteId: "other" })).rejects.toThrow(
      /site_not_found/,
    );

    const malformed = structuredClone(example);
    malformed.posts[0].slug = "Not A Slug";
    await expect(importManifest(sys.system.admin, JSON.stringify(malformed))).rejects.toThrow(
      /\$\.posts\[0\]\.slug/,
    );
  });

  it("refuses a sixth active secret key across imports", async () => {
    const keys = Array.from({ length: 4 }, (_, i) => "sk_" + String(i + 1).repeat(48));
    const more = structuredClone(example);
    more.secretKeys = [...example.secretKeys, ...keys];
    await importManifest(sys.system.admin, JSON.stringify(more));
    const sixth = structuredClone(example);
    sixth.secretKeys = ["sk_" + "9".repeat(48)];
    await expect(importManifest(sys.system.admin, JSON.stringify(sixth))).rejects.toThrow(
      /at most 5/,
    );
  });

  it("moves a domain claimed by another site's manifest", async () => {
    const shop = {
      site: { id: "shop", languages: ["en"], domains: ["localhost"] },
      siteKeys: ["pk_" + "ab".repeat(16)],
    };
    const report = await importManifest(sys.system.admin, JSON.stringify(shop));
    expect(report.changes.auth).toMatchObject({ domainsMovedFromOtherSites: 1 });
    const demo = await exportManifest(sys.system.admin, "demo") as Manifest;
    expect(demo.site.domains).toEqual(["demo.example"]);
  });
});
