/**
 * Language fallback on every storage: fallback=true fills each requested
 * language a map lacks from the first language along its chain in
 * site.fallbacks that has a value; without it nothing changes. The chains
 * are checked on import and exported.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { call, type CallOptions, type Json } from "./helpers/content.ts";
import { exportManifest, importManifest } from "../services/cli/site_manifest.ts";

const KEY = "pk_fb0123456789abcdef0123456789abcd";

const MANIFEST = {
  site: {
    id: "fallbacks",
    languages: ["en", "de", "de-AT", "fr"],
    fallbacks: { "de-AT": "de", "de": "en" },
  },
  siteKeys: [KEY],
  pages: [{
    marker: "home",
    href: "/",
    sections: [{
      marker: "hero",
      blocks: [
        { marker: "title", name: "Title", type: "text", content: { en: "Hello", de: "Hallo" } },
        { marker: "only_en", name: "Only", type: "text", content: { en: "Only" } },
        {
          marker: "cta",
          name: "Button",
          type: "link",
          content: { url: "/x", target: "_self", title: { en: "Go" } },
        },
        {
          marker: "items",
          name: "Items",
          type: "array",
          fields: [{ marker: "label", type: "text" }],
          content: [{ label: { en: "One", de: "Eins" } }],
        },
        { marker: "count", name: "Count", type: "number", content: 3 },
      ],
    }],
  }],
  posts: [{
    slug: "hello",
    status: "published",
    publishedAt: "2026-01-10T09:00:00Z",
    title: { en: "Hello", de: "Hallo" },
    body: { en: "<p>Hi</p>", de: " " },
  }],
};

describe.each(SYSTEM_STORAGES)("language fallback on %s", (storage) => {
  let sys: TestSystem;
  const get = async (path: string, options?: CallOptions) => {
    const answer = await call(sys.url, path, { key: KEY, ...options });
    expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    return answer.body as Json;
  };

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: MANIFEST });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("fills a missing language along its chain only with fallback=true", async () => {
    expect((await get("/content/v1/blocks/title?lang=de-AT")).content).toEqual({});
    expect((await get("/content/v1/blocks/title?lang=de-AT&fallback=true")).content)
      .toEqual({ "de-AT": "Hallo" });
    // Along the whole chain, in the site's order; a language without a chain stays absent.
    expect((await get("/content/v1/blocks/only_en?fallback=true")).content)
      .toEqual({ en: "Only", de: "Only", "de-AT": "Only" });
    expect((await get("/content/v1/blocks/title?fallback=true")).content)
      .toEqual({ en: "Hello", de: "Hallo", "de-AT": "Hallo" });
    // Any other value of the parameter is no fallback.
    expect((await get("/content/v1/blocks/only_en?fallback=1")).content).toEqual({ en: "Only" });
  });

  it("fills every language map of a page, link titles and object fields included", async () => {
    const page = await get("/content/v1/pages/home?lang=de-AT&fallback=true");
    const blocks = page.content.hero.content;
    expect(blocks.cta.content.title).toEqual({ "de-AT": "Go" });
    expect(blocks.items.content).toEqual([{ label: { "de-AT": "Eins" } }]);
    expect(blocks.count.content).toBe(3);
    const plain = await get("/content/v1/pages/home?lang=de-AT");
    expect(plain.content.hero.content.cta.content.title).toEqual({});
  });

  it("fills posts, where a blank translation counts as none", async () => {
    const post = (await get("/content/v1/blog/hello?lang=de,de-AT&fallback=true")).post;
    expect(post.title).toEqual({ de: "Hallo", "de-AT": "Hallo" });
    expect(post.body).toEqual({ de: "<p>Hi</p>", "de-AT": "<p>Hi</p>" });
    expect((await get("/content/v1/blog/hello?lang=de")).post.body).toEqual({});
    const list = await get("/content/v1/blog?lang=de-AT&fallback=true");
    expect(list.posts[0].title).toEqual({ "de-AT": "Hallo" });
  });

  it("checks the chains on import and exports them", async () => {
    const refuse = async (fallbacks: Json, path: string) => {
      const manifest = structuredClone(MANIFEST) as Json;
      manifest.site.fallbacks = fallbacks;
      await expect(importManifest(sys.system.admin, JSON.stringify(manifest))).rejects
        .toThrow(path);
    };
    await refuse({ de: "en", en: "de" }, "$.site.fallbacks.");
    await refuse({ de: "es" }, "$.site.fallbacks.de");
    await refuse({ es: "en" }, "$.site.fallbacks.es");
    const exported = await exportManifest(sys.system.admin, "fallbacks") as Json;
    expect(exported.site.fallbacks).toEqual({ "de-AT": "de", "de": "en" });
  });
});
