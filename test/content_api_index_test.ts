/**
 * The page and section indexes on every storage: shape, manifest order, the
 * updatedAt rule (the newest block's, else the last import that changed the
 * page or section), invalidation by imports through the gateway's caches,
 * and the CDN hints every site-key content answer carries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { acmeSite, call, type CallOptions, type Json } from "./helpers/content.ts";
import { importManifest } from "../services/cli/site_manifest.ts";

const CACHE_CONTROL =
  /^public, max-age=0, s-maxage=\d+, stale-while-revalidate=60, stale-if-error=86400$/;

describe.each(SYSTEM_STORAGES)("page and section indexes on %s", (storage) => {
  let sys: TestSystem;
  let manifest: Json;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  /** The latest updatedAt of the blocks of a page or section answer's sections. */
  const newestBlock = (sections: Json[]) =>
    sections.flatMap((s) => Object.values(s.content) as Json[])
      .map((b) => b.updatedAt as string).sort().at(-1);

  beforeAll(async () => {
    manifest = await acmeSite();
    sys = await startTestSystem({ storage, seed: manifest });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("lists every page in manifest order, updatedAt from its newest block", async () => {
    const answer = await get("/content/v1/pages");
    expect(answer.status).toBe(200);
    const markers = manifest.pages.map((p: Json) => p.marker);
    expect(answer.body.total).toBe(markers.length);
    expect(answer.body.pages.map((p: Json) => p.marker)).toEqual(markers);
    for (const [i, entry] of answer.body.pages.entries()) {
      expect(Object.keys(entry)).toEqual(["marker", "href", "updatedAt"]);
      expect(entry.href).toBe(manifest.pages[i].href);
      const page = (await get(`/content/v1/pages/${entry.marker}`)).body;
      const newest = newestBlock(Object.values(page.content));
      if (newest) expect(entry.updatedAt).toBe(newest);
      else expect(Date.parse(entry.updatedAt)).toBeLessThanOrEqual(Date.now());
    }
  });

  it("lists every section with its page, show and updatedAt", async () => {
    const answer = await get("/content/v1/sections");
    expect(answer.status).toBe(200);
    const expected = [
      ...manifest.pages.flatMap((p: Json) =>
        p.sections.map((s: Json) => ({ marker: s.marker, page: p.marker, show: s.show ?? true }))
      ),
      ...manifest.sections.map((s: Json) => ({
        marker: s.marker,
        page: null,
        show: s.show ?? true,
      })),
    ];
    expect(answer.body.total).toBe(expected.length);
    expect(
      answer.body.sections.map((s: Json) => ({ marker: s.marker, page: s.page, show: s.show })),
    )
      .toEqual(expected);
    for (const entry of answer.body.sections) {
      expect(Object.keys(entry).sort()).toEqual(["marker", "page", "show", "updatedAt"]);
      const section = (await get(`/content/v1/sections/${entry.marker}`)).body;
      const newest = newestBlock([section]);
      if (newest) expect(entry.updatedAt).toBe(newest);
    }
  });

  it("moves updatedAt with the import that changed a block, or a section without blocks", async () => {
    const pagesBefore = (await get("/content/v1/pages")).body.pages;
    const sectionsBefore = (await get("/content/v1/sections")).body.sections;
    const changed = structuredClone(manifest);
    changed.pages[0].sections[0].blocks[0].content = { en: "Hello, index" };
    const empty = changed.sections.find((s: Json) => s.blocks.length === 0);
    expect(empty, "the fixture has a section without blocks").toBeDefined();
    empty.show = !(empty.show ?? true);
    await importManifest(sys.system.admin, JSON.stringify(changed));
    try {
      const pages = (await get("/content/v1/pages")).body.pages;
      const home = changed.pages[0].marker;
      const at = (list: Json[], marker: string) => list.find((e) => e.marker === marker).updatedAt;
      expect(Date.parse(at(pages, home))).toBeGreaterThan(Date.parse(at(pagesBefore, home)));
      const title = (await get(`/content/v1/pages/${home}`)).body;
      expect(at(pages, home)).toBe(newestBlock(Object.values(title.content)));
      // Another page keeps its time.
      const other = changed.pages[1].marker;
      expect(at(pages, other)).toBe(at(pagesBefore, other));
      const sections = (await get("/content/v1/sections")).body.sections;
      expect(Date.parse(at(sections, empty.marker)))
        .toBeGreaterThan(Date.parse(at(sectionsBefore, empty.marker)));
      expect(sections.find((s: Json) => s.marker === empty.marker).show).toBe(empty.show ?? true);
      const footer = manifest.sections[0].marker;
      expect(at(sections, footer)).toBe(at(sectionsBefore, footer));
    } finally {
      await importManifest(sys.system.admin, JSON.stringify(manifest));
    }
  });

  it("gives site-key answers the CDN hints: stale rules and the tags of what they hold", async () => {
    const tags = async (path: string) => {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("cache-control"), path).toMatch(CACHE_CONTROL);
      const surrogate = answer.headers.get("surrogate-key");
      expect(answer.headers.get("cache-tag"), path).toBe(surrogate);
      return surrogate!.split(" ");
    };
    expect(await tags("/content/v1/langs")).toEqual(["site:acme", "langs"]);
    expect(await tags("/content/v1/pages")).toEqual([
      "site:acme",
      ...manifest.pages.map((p: Json) => `page:${p.marker}`),
    ]);
    const page = manifest.pages[0];
    const pageTags = await tags(`/content/v1/pages/${page.marker}`);
    expect(pageTags.slice(0, 2)).toEqual(["site:acme", `page:${page.marker}`]);
    for (const section of page.sections) {
      expect(pageTags).toContain(`section:${section.marker}`);
      for (const block of section.blocks) {
        expect(pageTags).toContain(`block:${section.marker}/${block.marker}`);
      }
    }
    const hero = page.sections[0];
    expect(await tags(`/content/v1/blocks/${hero.blocks[0].marker}?section=${hero.marker}`))
      .toEqual(["site:acme", `block:${hero.marker}/${hero.blocks[0].marker}`]);
    expect(await tags("/content/v1/blog/hello-world")).toEqual(["site:acme", "post:hello-world"]);
    const blog = await get("/content/v1/blog?limit=2");
    const blogTags = await tags("/content/v1/blog?limit=2");
    expect(blogTags).toEqual([
      "site:acme",
      "blog",
      ...blog.body.posts.map((p: Json) => `post:${p.slug}`),
    ]);
    // A refusal carries none.
    const refused = await get("/content/v1/pages/nope_nope");
    expect(refused.status).toBe(404);
    expect(refused.headers.get("surrogate-key")).toBeNull();
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  it("answers the indexes with ETags and 304s, and refuses a bad key", async () => {
    for (const path of ["/content/v1/pages", "/content/v1/sections"]) {
      const first = await get(path);
      const again = await get(path, { headers: { "if-none-match": first.headers.get("etag")! } });
      expect(again.status).toBe(304);
      expect(again.headers.get("surrogate-key")).toBe(first.headers.get("surrogate-key"));
      expect((await get(path, { key: "pk_x" })).status).toBe(401);
      expect((await get(path, { method: "POST" })).status).toBe(405);
    }
  });
});
