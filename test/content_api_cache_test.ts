/**
 * Caching and conditional requests through the real path, on every storage:
 * a strong ETag on every 200, If-None-Match → 304 (HEAD too), the CDN
 * headers, imports invalidating at once, and hot reads touching neither
 * storage nor the services behind the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  ACME_KEY_2,
  acmeSite,
  call,
  type CallOptions,
  ERROR_HEADERS,
  errorHeaders,
  type Json,
} from "./helpers/content.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { captureLog } from "./helpers/log_capture.ts";
import type { Database } from "../services/lib/db/mod.ts";

const ENDPOINTS = [
  "/content/v1/pages/home",
  "/content/v1/pages/home?lang=de",
  "/content/v1/sections/footer",
  "/content/v1/blocks/title",
  "/content/v1/blocks/note?section=footer",
  "/content/v1/blog",
  "/content/v1/blog?page=2&lang=en",
  "/content/v1/blog/hello-world",
  "/content/v1/langs",
  "/content/v1/pages",
  "/content/v1/sections",
];
const STRONG_ETAG = /^"[^"]+"$/;
const CDN_MAX_AGE_S = 20;

/**
 * Counts every statement sent to the database from now on, but those of the
 * services' background work (the webhook workers' polls, the rollups' builder,
 * the partitions' check): they run on timers of their own, whatever the
 * requests do.
 */
function countQueries(
  db: Database,
): { count: () => number; seen: string[]; stop: () => void } {
  let n = 0;
  const seen: string[] = [];
  const { query, transaction } = db;
  const background = /lib\/webhooks\/|ingest\/stats\/rollups|ingest\/partitions/;
  const fromRequest = () => !background.test(new Error().stack ?? "");
  db.query = ((...args: Parameters<Database["query"]>) => {
    if (fromRequest()) {
      n++;
      seen.push(String(args[0]).slice(0, 200));
    }
    return query.apply(db, args);
  }) as Database["query"];
  db.transaction = ((...args: Parameters<Database["transaction"]>) => {
    if (fromRequest()) n++;
    return transaction.apply(db, args);
  }) as Database["transaction"];
  return {
    count: () => n,
    seen,
    stop: () => {
      db.query = query;
      db.transaction = transaction;
    },
  };
}

describe.each(SYSTEM_STORAGES)("content API caching on %s", (storage) => {
  let sys: TestSystem;
  let manifest: Json;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);

  beforeAll(async () => {
    manifest = await acmeSite();
    sys = await startTestSystem({
      storage,
      seed: manifest,
      env: { CONTENT_CDN_MAX_AGE_S: String(CDN_MAX_AGE_S) },
      log: captureLog().log, // the last test's failures are expected: kept out of the output
    });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("gives every 200 a strong ETag that changes with the bytes", async () => {
    const tags = new Map<string, string>();
    for (const path of ENDPOINTS) {
      const first = await get(path);
      const again = await get(path);
      expect(first.status).toBe(200);
      const etag = first.headers.get("etag")!;
      expect(etag, path).toMatch(STRONG_ETAG);
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.text).toBe(first.text);
      tags.set(path, etag);
    }
    expect(new Set(tags.values()).size).toBe(ENDPOINTS.length);
    // The same answer through another key of the site, or the query key, has the same tag.
    const byOtherKey = await get("/content/v1/pages/home", { key: ACME_KEY_2 });
    expect(byOtherKey.headers.get("etag")).toBe(tags.get("/content/v1/pages/home"));
  });

  it("answers If-None-Match with 304 and no body, for GET and HEAD", async () => {
    for (const path of ENDPOINTS) {
      const first = await get(path);
      const etag = first.headers.get("etag")!;
      for (const method of ["GET", "HEAD"]) {
        const answer = await get(path, { method, headers: { "if-none-match": etag } });
        expect(answer.status, `${method} ${path}`).toBe(304);
        expect(answer.text).toBe("");
        expect(answer.headers.get("etag")).toBe(etag);
        expect(answer.headers.get("cache-control")).toBe(first.headers.get("cache-control"));
        expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      }
      const listed = await get(path, { headers: { "if-none-match": `"nope", ${etag}` } });
      expect(listed.status).toBe(304);
      const weak = await get(path, { headers: { "if-none-match": `W/${etag}` } });
      expect(weak.status).toBe(304);
      const other = await get(path, { headers: { "if-none-match": '"something-else"' } });
      expect(other.status).toBe(200);
      expect(other.text).toBe(first.text);
    }
  });

  it("echoes the request id on every kind of answer, cached or not, exactly once", async () => {
    const path = "/content/v1/pages/home";
    const etag = (await get(path)).headers.get("etag")!;
    const kinds: [string, CallOptions][] = [
      ["200", {}],
      ["HEAD 200", { method: "HEAD" }],
      ["304", { headers: { "if-none-match": etag } }],
      ["404", {}],
      ["401", { key: "pk_nope" }],
    ];
    for (const [kind, options] of kinds) {
      const target = kind === "404" ? "/content/v1/pages/nope" : path;
      const id = `req-${kind.replace(/\W/g, "")}-1`;
      const given = await get(target, {
        ...options,
        headers: { ...options.headers, "x-request-id": id },
      });
      expect(given.headers.get("x-request-id"), kind).toBe(id);
      const made = await get(target, options);
      expect(made.headers.get("x-request-id"), kind).toMatch(/^[0-9a-f-]{36}$/);
      const again = await get(target, options);
      expect(again.headers.get("x-request-id"), kind).not.toBe(made.headers.get("x-request-id"));
    }
  });

  it("never answers 304 to an error, and never lets a CDN keep one", async () => {
    const answer = await get("/content/v1/pages/nope", { headers: { "if-none-match": "*" } });
    expect(answer.status).toBe(404);
    expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
    expect(answer.headers.get("etag")).toBeNull();
  });

  it("lets a CDN keep a 200 for a short while only, per key", async () => {
    for (const path of ENDPOINTS) {
      const answer = await get(path);
      const cacheControl = answer.headers.get("cache-control")!;
      const match =
        /^public, max-age=0, s-maxage=(\d+), stale-while-revalidate=60, stale-if-error=86400$/
          .exec(cacheControl);
      expect(match, cacheControl).not.toBeNull();
      expect(Number(match![1])).toBeLessThanOrEqual(CDN_MAX_AGE_S);
      expect(Number(match![1])).toBeGreaterThanOrEqual(CDN_MAX_AGE_S - 2);
      expect(answer.headers.get("vary")?.toLowerCase()).toContain("x-crm-key");
    }
  });

  it("cuts s-maxage at the next scheduled publication", async () => {
    const key = "pk_7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a";
    await importManifest(
      sys.system.admin,
      JSON.stringify({
        site: { id: "soon", languages: ["en"] },
        siteKeys: [key],
        posts: [{
          slug: "later",
          publishedAt: new Date(Date.now() + 8_000).toISOString(),
          title: { en: "Later" },
          body: { en: "<p>x</p>" },
        }],
      }),
    );
    const list = await get("/content/v1/blog", { key });
    const seconds = Number(/s-maxage=(\d+)/.exec(list.headers.get("cache-control")!)![1]);
    expect(seconds).toBeLessThanOrEqual(8);
    const page = await get("/content/v1/langs", { key });
    expect(page.headers.get("cache-control")).toMatch(/s-maxage=(19|20),/);
  });

  it("drops what an import changes at once, everywhere it was cached", async () => {
    const before = new Map<string, { etag: string; text: string }>();
    for (const path of ENDPOINTS) {
      const answer = await get(path);
      before.set(path, { etag: answer.headers.get("etag")!, text: answer.text });
    }
    const edited = (await get("/content/v1/blocks/title")).body;
    const untouched = (await get("/content/v1/blocks/cta")).body;
    const changed = structuredClone(manifest);
    const hero = changed.pages[0].sections[0];
    hero.blocks[0].content = { en: "Hello again", de: "Hallo nochmal" };
    // A newer "note" in an earlier section: the footer's stays the oldest.
    hero.blocks.push({ marker: "note", name: "Hero note", type: "text", content: { en: "New" } });
    changed.posts[0].title = { en: "Hello there" };
    changed.site.languages = ["en", "de"];
    await importManifest(sys.system.admin, JSON.stringify(changed));
    try {
      expect((await get("/content/v1/blocks/title")).body.content).toEqual({
        en: "Hello again",
        de: "Hallo nochmal",
      });
      expect((await get("/content/v1/pages/home?lang=de")).body.content.hero.content.title.content)
        .toEqual({ de: "Hallo nochmal" });
      expect((await get("/content/v1/blog/hello-world")).body.post.title).toEqual({
        en: "Hello there",
      });
      expect((await get("/content/v1/langs")).body).toEqual({ langs: ["en", "de"] });
      // updatedAt is the time of the last edit: an unchanged block keeps it, and its id.
      const title = (await get("/content/v1/blocks/title")).body;
      expect(title.id).toBe(edited.id);
      expect(Date.parse(title.updatedAt)).toBeGreaterThan(Date.parse(edited.updatedAt));
      const cta = (await get("/content/v1/blocks/cta?lang=en,de")).body;
      expect(cta).toMatchObject({ id: untouched.id, updatedAt: untouched.updatedAt });
      expect((await get("/content/v1/blocks/note")).body.content).toEqual({ en: "Footer note" });
      expect((await get("/content/v1/blocks/note?section=hero")).body.content).toEqual({
        en: "New",
      });
      expect((await get("/content/v1/pages/home?lang=pt-BR")).body.message).toBe("unknown_lang");
      const oldTag = before.get("/content/v1/pages/home")!.etag;
      const conditional = await get("/content/v1/pages/home", {
        headers: { "if-none-match": oldTag },
      });
      expect(conditional.status).toBe(200);
      // Answers the import did not change keep their bytes and tag.
      const footer = await get("/content/v1/sections/footer");
      expect(footer.headers.get("etag")).toBe(before.get("/content/v1/sections/footer")!.etag);
    } finally {
      await importManifest(sys.system.admin, JSON.stringify(manifest));
    }
    expect((await get("/content/v1/blocks/title")).body.content.en).toBe("Hello");
  });

  it("serves a hot read without a single query to storage", async () => {
    for (const path of ENDPOINTS) await get(path); // warm up
    const counter = countQueries(sys.system.platform.db!);
    try {
      for (let round = 0; round < 20; round++) {
        for (const path of ENDPOINTS) {
          const answer = await get(path);
          expect(answer.status).toBe(200);
        }
        await get(`/content/v1/langs?key=${ACME_KEY_2}`, { key: null });
      }
      expect(counter.count(), counter.seen.join("\n")).toBe(0);
      // The counter does see reads: a new key is looked up in storage.
      await get("/content/v1/langs", { key: "pk_abababababababababababababababab" });
      expect(counter.count()).toBeGreaterThan(0);
    } finally {
      counter.stop();
    }
  });

  // Last: it stops the services behind the gateway.
  it("serves a hot read from the gateway alone, with auth- and content-service stopped", async () => {
    const warm = new Map<string, string>();
    for (const path of ENDPOINTS) warm.set(path, (await get(path)).text);
    for (const service of sys.system.services) {
      if (service.name !== "ingest") await service.close();
    }
    for (const path of ENDPOINTS) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.text).toBe(warm.get(path));
    }
    // A read that is not hot now fails, which shows the services are really gone.
    expect((await get("/content/v1/blocks/cover")).status).toBeGreaterThanOrEqual(500);
  });
});
