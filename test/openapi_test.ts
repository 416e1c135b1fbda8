/**
 * GET /openapi.json and the system's answers against it: the document is
 * served (cached, with ETags), and a walk over every path and method of the
 * document sends real requests for its success and error answers. Each
 * answer is checked against the document by the fetch every test here uses
 * (helpers/openapi.ts); this test also checks that the walk met every
 * operation and got the status it expected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import { OpenApiMismatch, OpenApiValidator } from "./helpers/openapi.ts";
import { OPENAPI_DOCUMENT } from "../services/gateway/openapi/document.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  // deno-lint-ignore no-explicit-any
  type Json = any;

  const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
  const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
  const REPORT_KEY = "rk_0123456789abcdef0123456789abcdef0123456789abcdef";
  /** A segment the walk reads, replaces and deletes, stored before it. */
  const SEGMENT_ID = "seg_0123456789abcdef01234567";
  const ORIGIN = "https://demo.example";

  async function seed(): Promise<Json> {
    const manifest: Json = await readFixture("contract-example.json");
    return { ...manifest, reportKeys: [REPORT_KEY] };
  }

  interface Case {
    /** The documented path and method the request falls under. */
    operation: string;
    path: string;
    init?: RequestInit;
    status: number;
  }

  const json = (body: unknown) => JSON.stringify(body);
  const content = (key: string | null = SITE_KEY): Record<string, string> =>
    key === null ? {} : { "x-crm-key": key };

  /** Requests for every operation of the document, with the status each must get. */
  /** The walk; shareId is a live share link of the seeded site. */
  function cases(shareId: string): Case[] {
    const out: Case[] = [];
    const add = (operation: string, path: string, status: number, init?: RequestInit) =>
      out.push({ operation, path, status, init });
    const contentPaths: Record<string, [string, string | undefined, string | undefined]> = {
      // documented path: [a path that exists, one that does not, one that is invalid]
      "/content/v1/pages/{marker}": [
        "/content/v1/pages/home",
        "/content/v1/pages/nope",
        "/content/v1/pages/a",
      ],
      "/content/v1/sections/{marker}": [
        "/content/v1/sections/footer",
        "/content/v1/sections/nope",
        "/content/v1/sections/a-b",
      ],
      "/content/v1/blocks/{marker}": [
        "/content/v1/blocks/title",
        "/content/v1/blocks/nope",
        "/content/v1/blocks/x",
      ],
      "/content/v1/blog": ["/content/v1/blog", undefined, "/content/v1/blog?lang=xx_YY"],
      "/content/v1/blog/{slug}": [
        "/content/v1/blog/hello-world",
        "/content/v1/blog/no-such-post",
        "/content/v1/blog/hello-world?lang=fr",
      ],
      "/content/v1/langs": ["/content/v1/langs", undefined, undefined],
      "/content/v1/pages": ["/content/v1/pages", undefined, undefined],
      "/content/v1/sections": ["/content/v1/sections", undefined, undefined],
      "/content/v1/changes": ["/content/v1/changes", undefined, "/content/v1/changes?since=nope"],
    };
    for (const [documented, [found, missing, invalid]] of Object.entries(contentPaths)) {
      for (const method of ["GET", "HEAD"]) {
        const op = `${method} ${documented}`;
        add(op, found, 200, { method, headers: content() });
        add(op, found, 401, { method, headers: content(null) });
        add(op, found, 401, { method, headers: content("pk_nope") });
        if (missing) add(op, missing, 404, { method, headers: content() });
        if (invalid) add(op, invalid, 400, { method, headers: content() });
      }
      add(`OPTIONS ${documented}`, found, 204, {
        method: "OPTIONS",
        headers: { origin: ORIGIN, "access-control-request-method": "GET" },
      });
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        add(`${method} ${documented}`, found, 405, { method, headers: content() });
      }
    }

    const beacon = (body: unknown, origin = ORIGIN): RequestInit => ({
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8", origin },
      body: json(body),
    });
    const server = (body: unknown, key = SECRET_KEY): RequestInit => ({
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": key },
      body: typeof body === "string" ? body : json(body),
    });
    const refusedMethods = (path: string, allowed: string[], documented = path) => {
      for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
        if (!allowed.includes(method)) add(`${method} ${documented}`, path, 405, { method });
      }
    };

    add("POST /marketing/event", "/marketing/event", 200, server({ name: "signup", id: "e1" }));
    add("POST /marketing/event", "/marketing/event", 200, server({ name: "signup", id: "e1" }));
    add("POST /marketing/event", "/marketing/event", 400, server({ name: "nope" }));
    add("POST /marketing/event", "/marketing/event", 400, server("[1]"));
    add("POST /marketing/event", "/marketing/event", 401, server({ name: "signup" }, "sk_bad"));
    add("POST /marketing/event", "/marketing/event", 413, server({ name: "x".repeat(9000) }));
    refusedMethods("/marketing/event", ["POST"]);

    add("POST /marketing/view", "/marketing/view", 204, beacon({ u: `${ORIGIN}/` }));
    add(
      "POST /marketing/view",
      "/marketing/view",
      400,
      beacon({ u: "https://x.example/" }, "https://x.example"),
    );
    add("POST /marketing/view", "/marketing/view", 400, beacon("not an object"));
    add("OPTIONS /marketing/view", "/marketing/view", 204, {
      method: "OPTIONS",
      headers: { origin: ORIGIN },
    });
    refusedMethods("/marketing/view", ["POST", "OPTIONS"]);

    add("POST /marketing/act", "/marketing/act", 204, beacon({ n: "signup", p: { plan: "pro" } }));
    add("POST /marketing/act", "/marketing/act", 400, beacon({ n: "signup" }, "https://x.example"));
    add("OPTIONS /marketing/act", "/marketing/act", 204, {
      method: "OPTIONS",
      headers: { origin: ORIGIN },
    });
    refusedMethods("/marketing/act", ["POST", "OPTIONS"]);

    add("POST /marketing/lead", "/marketing/lead", 204, beacon({ email: "a@b.example" }));
    add("POST /marketing/lead", "/marketing/lead", 200, server({ id: "l1", name: "Ann" }));
    add("POST /marketing/lead", "/marketing/lead", 400, server({ form: "only" }));
    add("POST /marketing/lead", "/marketing/lead", 401, server({ name: "Ann" }, "sk_bad"));
    add("OPTIONS /marketing/lead", "/marketing/lead", 204, {
      method: "OPTIONS",
      headers: { origin: ORIGIN },
    });
    refusedMethods("/marketing/lead", ["POST", "OPTIONS"]);

    const report = (body: unknown, key: string | null = REPORT_KEY): RequestInit => ({
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "x-report-key": key } : {}) },
      body: typeof body === "string" ? body : json(body),
    });
    const query = {
      metrics: ["visitors", "pageviews", "revenue", "bounce_rate"],
      date_range: "all",
      dimensions: ["time:day", "visit:channel"],
      include: { totals: true, time_labels: true },
    };
    add("POST /stats/v1/query", "/stats/v1/query", 200, report(query));
    add(
      "POST /stats/v1/query",
      "/stats/v1/query",
      200,
      report({
        metrics: ["visitors", "revenue"],
        date_range: "7d",
        include: { totals: true, compare: "previous_period" },
      }),
    );
    add("POST /stats/v1/query", "/stats/v1/query", 400, report({ metrics: [], date_range: "all" }));
    add("POST /stats/v1/query", "/stats/v1/query", 400, report("[]"));
    add("POST /stats/v1/query", "/stats/v1/query", 401, report(query, null));
    add(
      "POST /stats/v1/query",
      "/stats/v1/query",
      413,
      report({ ...query, pad: "x".repeat(17000) }),
    );
    add("OPTIONS /stats/v1/query", "/stats/v1/query", 204, { method: "OPTIONS" });
    refusedMethods("/stats/v1/query", ["POST", "OPTIONS"]);

    const funnel = {
      date_range: "all",
      steps: [{ page: "/" }, { event: "signup" }, { lead: true }],
    };
    add("POST /stats/v1/funnel", "/stats/v1/funnel", 200, report(funnel));
    add("POST /stats/v1/funnel", "/stats/v1/funnel", 400, report({ date_range: "all", steps: [] }));
    add("POST /stats/v1/funnel", "/stats/v1/funnel", 401, report(funnel, "rk_bad"));
    add("OPTIONS /stats/v1/funnel", "/stats/v1/funnel", 204, { method: "OPTIONS" });
    refusedMethods("/stats/v1/funnel", ["POST", "OPTIONS"]);

    const segmentBody = { name: "Germany", filters: [["is", "visit:country", ["DE"]]] };
    const send = (method: string, body?: unknown, key: string | null = REPORT_KEY) => ({
      method,
      headers: { "content-type": "application/json", ...(key ? { "x-report-key": key } : {}) },
      ...(body === undefined ? {} : { body: json(body) }),
    });
    const segments = "/stats/v1/segments";
    const segment = `${segments}/${SEGMENT_ID}`;
    const missing = `${segments}/seg_${"0".repeat(24)}`;
    add(`GET ${segments}`, segments, 200, send("GET"));
    add(`GET ${segments}`, segments, 401, send("GET", undefined, null));
    add(`POST ${segments}`, segments, 201, send("POST", { ...segmentBody, name: "Austria" }));
    add(`POST ${segments}`, segments, 409, send("POST", { ...segmentBody, name: "Fixed" }));
    add(`POST ${segments}`, segments, 400, send("POST", { name: "", filters: [] }));
    add(`POST ${segments}`, segments, 401, send("POST", segmentBody, "rk_bad"));
    add(
      `POST ${segments}`,
      segments,
      413,
      send("POST", { ...segmentBody, pad: "x".repeat(17000) }),
    );
    add(`OPTIONS ${segments}`, segments, 204, { method: "OPTIONS" });
    refusedMethods(segments, ["GET", "POST", "OPTIONS"]);
    const byId = "/stats/v1/segments/{id}";
    add(`PUT ${byId}`, segment, 200, send("PUT", { ...segmentBody, name: "Fixed" }));
    add(`PUT ${byId}`, segment, 400, send("PUT", { name: "x" }));
    add(`PUT ${byId}`, segment, 409, send("PUT", { ...segmentBody, name: "Austria" }));
    add(`PUT ${byId}`, missing, 404, send("PUT", segmentBody));
    add(`PUT ${byId}`, segment, 401, send("PUT", segmentBody, null));
    add(`PUT ${byId}`, segment, 413, send("PUT", { ...segmentBody, pad: "x".repeat(17000) }));
    add(`DELETE ${byId}`, segment, 401, send("DELETE", undefined, null));
    add(`DELETE ${byId}`, segment, 204, send("DELETE"));
    add(`DELETE ${byId}`, segment, 404, send("DELETE"));
    add(`OPTIONS ${byId}`, segment, 204, { method: "OPTIONS" });
    refusedMethods(segment, ["PUT", "DELETE", "OPTIONS"], byId);

    add("GET /stats/v1/site", "/stats/v1/site", 200, { headers: { "x-report-key": REPORT_KEY } });
    add("GET /stats/v1/site", "/stats/v1/site", 401, {});
    add("OPTIONS /stats/v1/site", "/stats/v1/site", 204, { method: "OPTIONS" });
    refusedMethods("/stats/v1/site", ["GET", "OPTIONS"]);

    for (const path of ["/healthz", "/livez"]) {
      add(`GET ${path}`, path, 200);
      add(`HEAD ${path}`, path, 200, { method: "HEAD" });
      // A prober may use any method: each is answered as GET is.
      for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
        add(`${method} ${path}`, path, 200, { method });
      }
    }

    for (const path of ["/widget.js", "/dashboard/dashboard.js", "/dashboard/dashboard.css"]) {
      add(`GET ${path}`, path, 200);
      add(`HEAD ${path}`, path, 200, { method: "HEAD" });
      refusedMethods(path, ["GET", "HEAD"]);
    }
    add("GET /dashboard/", "/dashboard/", 200);
    add("HEAD /dashboard/", "/dashboard/", 200, { method: "HEAD" });
    refusedMethods("/dashboard/", ["GET", "HEAD"]);
    // The redirect answers every method alike.
    for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      add(`${method} /dashboard`, "/dashboard", 308, { method, redirect: "manual" });
    }

    add("GET /openapi.json", "/openapi.json", 200);
    add("HEAD /openapi.json", "/openapi.json", 200, { method: "HEAD" });
    refusedMethods("/openapi.json", ["GET", "HEAD"]);

    const shared = `/share/${shareId}`;
    add("GET /share/{id}", shared, 200);
    add("GET /share/{id}", `${shared}?embed=true`, 200);
    add("GET /share/{id}", `/share/sh_${"0".repeat(32)}`, 404);
    add("HEAD /share/{id}", shared, 200, { method: "HEAD" });
    add("HEAD /share/{id}", "/share/nope", 404, { method: "HEAD" });
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      add(`${method} /share/{id}`, shared, 405, { method });
    }
    for (
      const [headers, status] of [[{ "x-share-link": shareId }, 200], [
        { "x-share-link": "sh_x" },
        401,
      ]] as const
    ) {
      add("POST /stats/v1/query", "/stats/v1/query", status, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: json({ metrics: ["visitors"], date_range: "7d" }),
      });
    }
    return out;
  }

  /** Every operation of the document, as `METHOD path`. */
  function documentedOperations(): string[] {
    const out: string[] = [];
    for (const [path, item] of Object.entries<Json>(OPENAPI_DOCUMENT.paths)) {
      for (const method of ["get", "head", "post", "put", "patch", "delete", "options"]) {
        if (item[method]) out.push(`${method.toUpperCase()} ${path}`);
      }
    }
    return out;
  }

  describe("the OpenAPI document", () => {
    let sys: TestSystem;
    let shareId: string;

    beforeAll(async () => {
      sys = await startTestSystem({ storage, seed: await seed() });
      shareId = (await sys.system.admin.auth.createShareLink({ siteId: "demo" })).link!.id;
      await sys.system.platform.db!.query(
        `insert into ingest.segments (site_id, id, name, filters)
       values ('demo', $1, 'Fixed', '[["is", "visit:country", ["DE"]]]')`,
        [SEGMENT_ID],
      );
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("is served as JSON with an ETag per encoding, 304 for any of them", async () => {
      const plain = await fetch(`${sys.url}/openapi.json`, {
        headers: { "accept-encoding": "identity" },
      });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toBe("application/json");
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(await plain.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
      const etag = plain.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

      const br = await fetch(`${sys.url}/openapi.json`, { headers: { "accept-encoding": "br" } });
      expect(br.headers.get("content-encoding")).toBe("br");
      expect(br.headers.get("vary")).toBe("Accept-Encoding");
      const brTag = br.headers.get("etag")!;
      expect(brTag).not.toBe(etag);
      expect(await br.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));

      for (const [tag, encoding] of [[etag, "br"], [brTag, "identity"], [brTag, "gzip"]]) {
        const again = await fetch(`${sys.url}/openapi.json`, {
          headers: { "if-none-match": tag, "accept-encoding": encoding },
        });
        expect(again.status, `${tag} ${encoding}`).toBe(304);
        expect(await again.text()).toBe("");
      }
      expect(plain.headers.get("access-control-expose-headers")).toMatch(/ETag/);
    });

    it("describes every answer of every operation: a walk over the document", async () => {
      const walk = cases(shareId);
      const met = new Set<string>();
      const statuses = new Map<string, Set<number>>();
      for (const c of walk) {
        const response = await fetch(sys.url + c.path, c.init);
        await response.body?.cancel();
        expect(response.status, `${c.operation} ${c.path}`).toBe(c.status);
        met.add(c.operation);
        statuses.set(c.operation, (statuses.get(c.operation) ?? new Set()).add(c.status));
      }
      // Every operation was requested, and every operation that can succeed also failed once.
      expect(documentedOperations().filter((op) => !met.has(op))).toEqual([]);
      for (const [operation, seen] of statuses) {
        const item = OPENAPI_DOCUMENT.paths[
          operation.slice(operation.indexOf(" ") + 1) as keyof typeof OPENAPI_DOCUMENT.paths
        ] as Json;
        const responses = Object.keys(item[operation.split(" ")[0].toLowerCase()].responses);
        for (const status of seen) expect(responses, operation).toContain(String(status));
      }
    });

    it("describes the refusals of the HTTP layer: 414, 431, unknown paths", async () => {
      const long = await fetch(`${sys.url}/content/v1/pages/home?x=${"a".repeat(9000)}`);
      expect(long.status).toBe(414);
      const headers: Record<string, string> = {};
      for (let i = 0; i < 110; i++) headers[`x-h${i}`] = "1";
      const many = await fetch(`${sys.url}/stats/v1/query`, { method: "POST", headers });
      expect(many.status).toBe(431);
      const unknown = await fetch(`${sys.url}/content/v1/page/home`);
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).statusCode).toBe(404);
    });

    it("rejects an answer that breaks the document", () => {
      const validator = new OpenApiValidator();
      const seen = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        validator.check({
          method: "GET",
          url: "http://127.0.0.1:1/content/v1/langs",
          status,
          headers: new Headers({ "content-type": "application/json", ...headers }),
          body: JSON.stringify(body),
        });
      const ok = {
        "x-request-id": "r",
        "etag": '"abc"',
        "cache-control":
          "public, max-age=0, s-maxage=5, stale-while-revalidate=60, stale-if-error=86400",
        "surrogate-key": "site:acme langs",
        "cache-tag": "site:acme langs",
        "vary": "x-crm-key",
        "access-control-allow-origin": "*",
        "access-control-expose-headers": "ETag, X-Request-Id",
      };
      expect(seen(200, { langs: ["en"] }, ok)).toEqual([]);
      expect(seen(200, { langs: "en" }, ok).join()).toMatch(/langs/);
      expect(seen(200, { langs: ["en"] }, { ...ok, etag: "W/weak" }).join()).toMatch(/ETag/);
      expect(seen(201, { langs: ["en"] }, ok).join()).toMatch(/status not listed/);
      expect(seen(401, { message: "invalid_key", extra: 1 }, ok).join()).toMatch(/additional/);
      expect(new OpenApiMismatch(["x"]).message).toMatch(/OpenAPI/);
    });
  });

  describe("the document's limits answers", () => {
    let sys: TestSystem;

    beforeAll(async () => {
      sys = await startTestSystem({
        storage,
        seed: await seed(),
        // A clock that stands still: the limits' one-minute window cannot turn during the test.
        clock: new ManualClock(Date.UTC(2026, 4, 1, 12)),
        env: { RATE_LIMIT_STATS_PER_KEY: "1", RATE_LIMIT_CONTENT_PER_IP: "1" },
      });
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("describes 429 on the content and reports routes", async () => {
      const headers = { "x-crm-key": SITE_KEY };
      expect((await fetch(`${sys.url}/content/v1/langs`, { headers })).status).toBe(200);
      const limited = await fetch(`${sys.url}/content/v1/langs`, { headers });
      expect(limited.status).toBe(429);
      expect((await limited.json()).message).toBe("rate_limit_exceeded");
      const site = () =>
        fetch(`${sys.url}/stats/v1/site`, { headers: { "x-report-key": REPORT_KEY } });
      expect((await site()).status).toBe(200);
      expect((await site()).status).toBe(429);
    });
  });
});
