/**
 * Preview keys on every storage: pv_ keys from the manifest and from `admin
 * key create --kind preview`, drafts and scheduled posts visible with their
 * status, answers that no shared cache keeps (a site key never sees what a
 * preview saw), ETags and 304s, revocation, and the marketing and reports
 * routes refusing them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { acmeSite, call, type CallOptions, type Json } from "./helpers/content.ts";
import { runAdmin } from "./helpers/admin.ts";

const PREVIEW_KEY = "pv_0123456789abcdef0123456789abcdef";

describe.each(SYSTEM_STORAGES)("content API preview keys on %s", (storage) => {
  let sys: TestSystem;
  let manifest: Json;
  let env: Record<string, string>;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  const preview = (path: string, options?: CallOptions) =>
    get(path, { key: PREVIEW_KEY, ...options });
  const slugs = (list: Json) => list.posts.map((p: Json) => p.slug);

  beforeAll(async () => {
    manifest = { ...(await acmeSite()), previewKeys: [PREVIEW_KEY] };
    sys = await startTestSystem({ storage, seed: manifest, env: { ADMIN_TOKEN: "t0k" } });
    env = {
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
      INGEST_URL: sys.config.ingestUrl,
      ADMIN_TOKEN: "t0k",
    };
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("shows drafts and scheduled posts with their status; a site key never", async () => {
    const list = await preview("/content/v1/blog?limit=50");
    expect(list.status).toBe(200);
    const all = manifest.posts.map((p: Json) => p.slug);
    expect(list.body.total).toBe(all.length);
    expect(slugs(list.body).sort()).toEqual([...all].sort());
    const status = Object.fromEntries(list.body.posts.map((p: Json) => [p.slug, p.status]));
    expect(status["draft-post"]).toBe("draft");
    expect(status["future-post"]).toBe("scheduled");
    expect(status["hello-world"]).toBe("published");
    // publishedAt:desc; a post without publishedAt sorts by its createdAt.
    const order = slugs(list.body);
    const at = (slug: string) => {
      const p = manifest.posts.find((q: Json) => q.slug === slug);
      return Date.parse(p.publishedAt ?? p.createdAt);
    };
    const times = order.map(at);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(order.indexOf("no-date")).toBeLessThan(order.indexOf("hello-world"));

    const draft = await preview("/content/v1/blog/draft-post");
    expect(draft.status).toBe(200);
    expect(draft.body.post.status).toBe("draft");
    expect((await preview("/content/v1/blog/future-post")).body.post.status).toBe("scheduled");
    expect((await preview("/content/v1/blog/hello-world")).body.post.status).toBe("published");

    const site = await get("/content/v1/blog?limit=50");
    expect(slugs(site.body)).not.toContain("draft-post");
    expect(site.body.posts[0].status).toBeUndefined();
    expect((await get("/content/v1/blog/draft-post")).status).toBe(404);
  });

  it("is never kept by a shared cache: a site-key read after a preview read shows no draft", async () => {
    for (const path of ["/content/v1/blog?limit=40", "/content/v1/blog/draft-post"]) {
      const seen = await preview(path);
      expect(seen.status).toBe(200);
      expect(seen.headers.get("cache-control")).toBe("private, no-store");
      expect(seen.headers.get("surrogate-key")).toBeNull();
      expect(seen.headers.get("cache-tag")).toBeNull();
      const site = await get(path);
      expect(site.text).not.toContain("draft-post");
      if (site.status === 200) expect(site.headers.get("cache-control")).toMatch(/^public, /);
      else expect(site.body).toEqual({ message: "post_not_found" });
      // And the other way: the site key's cached answer is not what a preview gets.
      expect((await preview(path)).text).toContain("draft-post");
    }
  });

  it("answers If-None-Match with 304, for GET and HEAD", async () => {
    const first = await preview("/content/v1/blog/draft-post");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    for (const method of ["GET", "HEAD"]) {
      const again = await preview("/content/v1/blog/draft-post", {
        method,
        headers: { "if-none-match": etag },
      });
      expect(again.status, method).toBe(304);
      expect(again.headers.get("cache-control")).toBe("private, no-store");
      expect(again.headers.get("etag")).toBe(etag);
    }
    // Pages and the other reads answer as to a site key, privately.
    const page = await preview("/content/v1/pages/home");
    expect(page.status).toBe(200);
    expect(page.text).toBe((await get("/content/v1/pages/home")).text);
    expect(page.headers.get("cache-control")).toBe("private, no-store");
  });

  it("is refused by the marketing and reports routes", async () => {
    const event = await fetch(`${sys.url}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": PREVIEW_KEY },
      body: JSON.stringify({ name: "signup" }),
    });
    expect(event.status).toBe(401);
    expect((await event.json()).message).toBe("invalid_key");
    const report = await fetch(`${sys.url}/stats/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": PREVIEW_KEY },
      body: JSON.stringify({ metrics: ["visitors"], date_range: "7d" }),
    });
    expect(report.status).toBe(401);
    expect((await report.json()).message).toBe("invalid_key");
  });

  it("is made by admin key create --kind preview, listed by export-site, and revoked", async () => {
    const created = await runAdmin(["key", "create", "acme", "--kind", "preview"], env);
    expect(created.code, created.stderr).toBe(0);
    const { key, keyHash } = JSON.parse(created.stdout);
    expect(key).toMatch(/^pv_[a-f0-9]{32}$/);
    const draft = await get("/content/v1/blog/draft-post", { key });
    expect(draft.status).toBe(200);
    expect(draft.body.post.status).toBe("draft");
    const exported = JSON.parse((await runAdmin(["export-site", "acme"], env)).stdout);
    expect(exported.previewKeys).toContain(keyHash);
    expect(exported.previewKeys).toHaveLength(2);
    const revoked = await runAdmin(["key", "revoke", key], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await get("/content/v1/blog/draft-post", { key });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ message: "invalid_key" });
    expect((await preview("/content/v1/blog/draft-post")).status).toBe(200);
  });
});
