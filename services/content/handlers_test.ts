/**
 * content-service's handlers through Connect's in-memory transport on
 * PGlite: its part of a site import, the rendered answers with their
 * freshness, scheduled posts on the injected clock, and typed errors (Code
 * and ErrorDetail) as the gateway sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, Code } from "@connectrpc/connect";
import { ContentService, type RenderedBody } from "../lib/gen/crm/content/v1/content_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { ManualClock } from "../lib/clock.ts";
import { reasonOf } from "../lib/errors.ts";
import { type InMemoryService, inMemoryService } from "../../test/helpers/in_memory.ts";
import { readFixture } from "../../test/helpers/system.ts";
import { contentService } from "./main.ts";
import { SITE_CACHE_TTL_MS } from "./site_cache.ts";

const HOUR = 3_600_000;
const json = (body: RenderedBody | undefined) => JSON.parse(new TextDecoder().decode(body!.json));
const lang = (...values: string[]) => ({ values });
const refusal = (call: Promise<unknown>) => call.then(() => undefined, reasonOf);

describe("content-service through an in-memory transport", () => {
  const clock = new ManualClock(Date.UTC(2026, 1, 1, 12));
  let service: InMemoryService;
  let content: Client<typeof ContentService>;
  let site: Client<typeof SiteAdminService>;
  // deno-lint-ignore no-explicit-any
  let manifest: any;

  beforeAll(async () => {
    service = await inMemoryService(contentService, { clock });
    content = service.client(ContentService);
    site = service.client(SiteAdminService);
    manifest = await readFixture("contract-example.json");
  });
  afterAll(async () => {
    await service?.close();
  });

  it("stores nothing on a dry run; serves the site once it is imported", async () => {
    const manifestJson = JSON.stringify(manifest);
    await site.importSite({ manifestJson, dryRun: true });
    expect(json((await content.listLanguages({ siteId: "demo" })).body)).toEqual({ langs: [] });
    expect(Object.keys((await site.importSite({ manifestJson })).changes).length)
      .toBeGreaterThan(0);
    expect((await site.importSite({ manifestJson })).changes).toEqual({});
    const langs = await content.listLanguages({ siteId: "demo" });
    expect(json(langs.body)).toEqual({ langs: ["en", "de"] });
    expect(langs.body?.freshUntilMs).toBe(BigInt(clock.now() + SITE_CACHE_TTL_MS));
    const exported = JSON.parse((await site.exportSite({ siteId: "demo" })).manifestJson);
    expect(exported.pages.map((p: { marker: string }) => p.marker)).toEqual(["home"]);
    expect(exported.posts.map((p: { slug: string }) => p.slug)).toEqual(["hello-world"]);
  });

  it("renders pages, sections and blocks in the languages asked, in the site's order", async () => {
    const block = await content.getBlock({ siteId: "demo", marker: "title", lang: lang("de") });
    expect(json(block.body).content).toEqual({ de: "Hallo" });
    expect(block.body?.etag).toMatch(/^".+"$/);
    const both = await content.getBlock({ siteId: "demo", marker: "title", lang: lang("de,en") });
    expect(Object.keys(json(both.body).content)).toEqual(["en", "de"]);
    const page = json((await content.getPage({ siteId: "demo", marker: "home" })).body);
    expect(Object.keys(page.content.hero.content)).toEqual([
      "title",
      "cover",
      "cta",
      "card",
      "items",
    ]);
    const section = json((await content.getSection({ siteId: "demo", marker: "footer" })).body);
    expect(section).toEqual({ marker: "footer", show: true, content: {} });
    const inSection = await content.getBlock({
      siteId: "demo",
      marker: "title",
      section: "hero",
      lang: lang("en"),
    });
    expect(json(inSection.body).content).toEqual({ en: "Hello" });
  });

  it("refuses markers, unknown things and languages with typed errors", async () => {
    const siteId = "demo";
    expect(await refusal(content.getPage({ siteId, marker: "Not A Marker" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "invalid_marker",
    });
    expect(await refusal(content.getPage({ siteId, marker: "nope" }))).toMatchObject({
      code: Code.NotFound,
      reason: "page_not_found",
    });
    expect(await refusal(content.getSection({ siteId, marker: "nope" }))).toMatchObject({
      code: Code.NotFound,
      reason: "section_not_found",
    });
    expect(await refusal(content.getBlock({ siteId, marker: "title", section: "footer" })))
      .toMatchObject({ code: Code.NotFound, reason: "block_not_found" });
    expect(await refusal(content.getPost({ siteId, slug: "nope" }))).toMatchObject({
      code: Code.NotFound,
      reason: "post_not_found",
    });
    expect(await refusal(content.getPage({ siteId, marker: "home", lang: lang("en,fr") })))
      .toMatchObject({
        code: Code.InvalidArgument,
        reason: "unknown_lang",
        fields: { lang: "en,fr", unknown: ["fr"], available: ["en", "de"] },
      });
    expect(await refusal(content.getPage({ siteId, marker: "home", lang: lang("en", " de") })))
      .toMatchObject({
        code: Code.InvalidArgument,
        reason: "invalid_lang",
        fields: { lang: " de" },
      });
    const many = Array.from({ length: 51 }, () => "en").join(",");
    expect(await refusal(content.listPosts({ siteId, lang: lang(many) }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "too_many_langs",
      fields: { max: 50 },
    });
  });

  it("publishes a scheduled post when the clock passes its time, and says when in freshness", async () => {
    const at = clock.now() + HOUR;
    const scheduled = {
      ...manifest.posts[0],
      slug: "coming-soon",
      publishedAt: new Date(at).toISOString(),
      title: { en: "Soon" },
    };
    await site.importSite({
      manifestJson: JSON.stringify({ ...manifest, posts: [...manifest.posts, scheduled] }),
    });
    const before = await content.listPosts({ siteId: "demo" });
    expect(json(before.body).posts.map((p: { slug: string }) => p.slug)).toEqual(["hello-world"]);
    expect(before.body?.freshUntilMs).toBe(BigInt(Math.min(at, clock.now() + SITE_CACHE_TTL_MS)));
    expect(await refusal(content.getPost({ siteId: "demo", slug: "coming-soon" }))).toMatchObject(
      { code: Code.NotFound, reason: "post_not_found" },
    );
    clock.set(at);
    const after = await content.listPosts({ siteId: "demo" });
    expect(json(after.body).posts.map((p: { slug: string }) => p.slug)).toEqual([
      "coming-soon",
      "hello-world",
    ]);
    const post = json((await content.getPost({ siteId: "demo", slug: "coming-soon" })).body);
    expect(post.post.title).toEqual({ en: "Soon" });
  });

  it("answers a re-imported value at once, with another ETag, while the clock stands still", async () => {
    const ask = () => content.getBlock({ siteId: "demo", marker: "title", lang: lang("en") });
    const old = await ask();
    const changed = structuredClone(manifest);
    changed.pages[0].sections[0].blocks[0].content.en = "Welcome";
    await site.importSite({ manifestJson: JSON.stringify(changed) });
    const now = await ask();
    expect(json(now.body).content).toEqual({ en: "Welcome" });
    expect(now.body?.etag).not.toBe(old.body?.etag);
  });
});
