/**
 * The changes feed on every storage: the full answer, what changed since a
 * cursor (removed names included), the same names as the webhook messages
 * of that time, scheduled posts joining the feed when they are readable and
 * not before, and cursors refused when this site did not give them out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  acmeSite,
  call,
  type CallOptions,
  type Json,
  OTHER_KEY,
  otherSite,
} from "./helpers/content.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { ManualClock } from "../services/lib/clock.ts";

const HOOK = {
  url: "https://hooks.example/crm",
  events: ["content.published", "post.published"],
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
};

describe.each(SYSTEM_STORAGES)("content changes feed on %s", (storage) => {
  const clock = new ManualClock();
  let sys: TestSystem;
  let manifest: Json;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  const ok = async (path: string, options?: CallOptions) => {
    const answer = await get(path, options);
    expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    return answer.body;
  };
  const importSite = (site: Json) => importManifest(sys.system.admin, JSON.stringify(site));
  const since = (cursor: string) => ok(`/content/v1/changes?since=${cursor}`);
  /** The data of the site's webhook messages of a type, oldest first. */
  const messages = async (type: string) =>
    (await sys.system.platform.db!.query<{ data: string | Json }>(
      `select data from content.webhook_messages where site_id = 'acme' and type = $1
        order by created_at, occurred_at`,
      [type],
    )).map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data));

  beforeAll(async () => {
    manifest = { ...(await acmeSite()), webhooks: [HOOK] };
    sys = await startTestSystem({ storage, seed: manifest, clock });
    await importSite(await otherSite());
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("names everything the API answers without since", async () => {
    const feed = await ok("/content/v1/changes");
    expect(feed.full).toBe(true);
    expect(feed.cursor).toMatch(/^[A-Za-z0-9_-]{1,200}$/);
    const sections = [
      ...manifest.pages.flatMap((p: Json) => p.sections),
      ...manifest.sections,
    ];
    expect(feed.pages).toEqual(manifest.pages.map((p: Json) => p.marker).sort());
    expect(feed.sections).toEqual(sections.map((s: Json) => s.marker).sort());
    expect(feed.blocks).toEqual(
      sections.flatMap((s: Json) => s.blocks.map((b: Json) => `${s.marker}/${b.marker}`)).sort(),
    );
    // Every visible post, as the blog counts them: no draft, no scheduled post.
    const blog = await ok("/content/v1/blog?limit=50");
    expect(feed.posts).toEqual(blog.posts.map((p: Json) => p.slug).sort());
    expect(feed.posts).not.toContain("draft-post");
    expect(feed.posts).not.toContain("future-post");
  });

  it("names what an import changed since a cursor, as its content.published message did", async () => {
    const start = (await ok("/content/v1/changes")).cursor;
    const quiet = await since(start);
    expect(quiet).toMatchObject({ full: false, pages: [], sections: [], blocks: [], posts: [] });
    const before = (await messages("content.published")).length;

    const changed = structuredClone(manifest);
    const hero = changed.pages[0].sections[0];
    hero.blocks[0].content = { en: "Hello, feed" };
    const removed = hero.blocks.pop();
    changed.posts[0].title = { en: "Hello, feed" };
    await importSite(changed);
    try {
      const feed = await since(start);
      expect(feed.full).toBe(false);
      expect(feed.blocks).toContain(`${hero.marker}/${hero.blocks[0].marker}`);
      // A name whose answer is now 404 is there too.
      expect(feed.blocks).toContain(`${hero.marker}/${removed.marker}`);
      const gone = await get(`/content/v1/blocks/${removed.marker}?section=${hero.marker}`);
      expect(gone.status).toBe(404);
      expect(feed.pages).toEqual([changed.pages[0].marker]);
      expect(feed.posts).toEqual([changed.posts[0].slug]);
      // Exactly the names the webhook message of the import carried.
      const sent = (await messages("content.published")).slice(before);
      expect(sent).toHaveLength(1);
      const { siteId, ...names } = sent[0];
      expect(siteId).toBe("acme");
      expect({ pages: feed.pages, sections: feed.sections, blocks: feed.blocks, posts: feed.posts })
        .toEqual(names);
      // The new content is readable with the change in the feed.
      expect(
        (await ok(`/content/v1/blocks/${hero.blocks[0].marker}?section=${hero.marker}`))
          .content,
      ).toEqual({ en: "Hello, feed" });
      // The next cursor has seen it.
      expect(await since(feed.cursor)).toMatchObject({ pages: [], blocks: [], posts: [] });
    } finally {
      await importSite(manifest);
    }
  });

  it("lists a scheduled post when it is readable, as its post.published message names it", async () => {
    const at = clock.now() + 60_000;
    const scheduled = structuredClone(manifest);
    scheduled.posts.push({
      slug: "feed-soon",
      status: "published",
      publishedAt: new Date(at).toISOString(),
      title: { en: "Soon" },
      body: { en: "<p>Soon</p>" },
    });
    const start = (await ok("/content/v1/changes")).cursor;
    await importSite(scheduled);
    try {
      const early = await since(start);
      expect(early.posts).not.toContain("feed-soon");
      expect((await get("/content/v1/blog/feed-soon")).status).toBe(404);
      const message = (await messages("post.published")).find((m) => m.slug === "feed-soon");
      expect(message).toMatchObject({ siteId: "acme", publishedAt: new Date(at).toISOString() });
      clock.advance(60_001);
      const feed = await since(start);
      expect(feed.posts).toContain("feed-soon");
      expect((await get("/content/v1/blog/feed-soon")).status).toBe(200);
      // And from a cursor given after the import, before the post's time.
      expect((await since(early.cursor)).posts).toEqual(["feed-soon"]);
      expect((await since(feed.cursor)).posts).toEqual([]);
    } finally {
      await importSite(manifest);
    }
  });

  it("refuses a cursor this site did not give out, another site's included", async () => {
    const mine = (await ok("/content/v1/changes")).cursor;
    const theirs = (await ok("/content/v1/changes", { key: OTHER_KEY })).cursor;
    expect((await get(`/content/v1/changes?since=${mine}`, { key: OTHER_KEY })).body)
      .toEqual({ message: "invalid_cursor" });
    const refused = await get(`/content/v1/changes?since=${theirs}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message: "invalid_cursor" });
    expect(refused.headers.get("cache-control")).toBe("no-store");
    const flipped = mine.slice(0, 3) + (mine[3] === "A" ? "B" : "A") + mine.slice(4);
    for (const bad of [flipped, "nope", "", "a".repeat(201), "%2F%2F"]) {
      const answer = await get(`/content/v1/changes?since=${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body).toEqual({ message: "invalid_cursor" });
    }
    expect((await get("/content/v1/changes", { key: null })).status).toBe(401);
  });
});
