/**
 * The content API's HTTP surface through the real path, on every storage:
 * versioned routes, the unknown-route 404, 405 for other methods, HEAD like
 * GET, CORS, and the error contract (JSON with message, application/json,
 * no-store) for every error row, 5xx included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { type CapturedLog, captureLog } from "./helpers/log_capture.ts";
import {
  ACME_KEY,
  acmeSite,
  type Answer,
  call,
  type CallOptions,
  ERROR_HEADERS,
  errorHeaders,
} from "./helpers/content.ts";

const ENDPOINTS = [
  "/content/v1/pages/home",
  "/content/v1/sections/hero",
  "/content/v1/blocks/title",
  "/content/v1/blog",
  "/content/v1/blog/hello-world",
  "/content/v1/langs",
  "/content/v1/pages",
  "/content/v1/sections",
  "/content/v1/changes",
];

const UNKNOWN = [
  "/content/v1/page/home",
  "/content/v1/section/hero",
  "/content/v1/block/title",
  "/content/v1/post/hello-world",
  "/content/v1/posts",
  "/content/v1/lang",
  "/content/pages/home",
  "/content/v2/pages/home",
  "/content/V1/pages/home",
  "/content/v1/pages/home/hero",
  "/content/v1/sections/hero/title",
  "/content/v1/blocks/title/extra",
  "/content/v1/blog/hello-world/comments",
  "/content/v1/langs/en",
  "/content/v1/index",
  "/content/v1/changes/all",
  "/content/v1",
  "/content",
  "/content/",
];

describe.each(SYSTEM_STORAGES)("content API over HTTP on %s", (storage) => {
  let sys: TestSystem;
  let captured: CapturedLog;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  const expectError = (answer: Answer, status: number, body: unknown) => {
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual(body);
    expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
  };

  beforeAll(async () => {
    captured = captureLog();
    sys = await startTestSystem({ storage, seed: await acmeSite(), log: captured.log });
  });
  afterAll(async () => {
    await sys?.close();
  });

  describe("versioning and routes", () => {
    it("serves every endpoint under /content/v1", async () => {
      for (const path of ENDPOINTS) expect((await get(path)).status, path).toBe(200);
    });

    it("answers a URL matching no endpoint with the unknown-route 404, key or not", async () => {
      for (const path of UNKNOWN) {
        for (const key of [ACME_KEY, null]) {
          expectError(await get(path, { key }), 404, {
            message: `Cannot GET ${path}`,
            error: "Not Found",
            statusCode: 404,
          });
        }
      }
    });

    it("leaves the query (which can carry the key) out of the unknown-route message", async () => {
      const answer = await get(`/content/v1/page/home?key=${ACME_KEY}&lang=en`, { key: null });
      expect(answer.body.message).toBe("Cannot GET /content/v1/page/home");
      expect(answer.text).not.toContain(ACME_KEY);
    });

    it("names the method in the unknown-route message", async () => {
      expectError(await get("/content/v1/page/home", { method: "POST" }), 404, {
        message: "Cannot POST /content/v1/page/home",
        error: "Not Found",
        statusCode: 404,
      });
    });

    it("tolerates one trailing slash (our design)", async () => {
      expect((await get("/content/v1/pages/home/")).body).toEqual(
        (await get("/content/v1/pages/home")).body,
      );
    });
  });

  describe("methods", () => {
    it("answers 405 method_not_allowed to every other method on every endpoint, before the key", async () => {
      for (const path of ENDPOINTS) {
        for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
          for (const key of [ACME_KEY, null]) {
            const answer = await get(path, { method, key });
            expectError(answer, 405, { message: "method_not_allowed" });
          }
        }
      }
    });

    /**
     * HEAD's headers are GET's. s-maxage counts down to the moment the answer may change
     * (a scheduled post, say), in whole seconds: HEAD, asked after GET, may be one lower.
     */
    const expectSameHeaders = (path: string, head: Headers, got: Headers) => {
      for (const name of ["content-type", "etag", "vary", "content-encoding"]) {
        expect(head.get(name), `${path} ${name}`).toBe(got.get(name));
      }
      const policy = (headers: Headers) => {
        const value = headers.get("cache-control") ?? "";
        const sMaxAge = Number(/s-maxage=(\d+)/.exec(value)?.[1] ?? NaN);
        return { rest: value.replace(/s-maxage=\d+/, "s-maxage=N"), sMaxAge };
      };
      const [h, g] = [policy(head), policy(got)];
      expect(h.rest, `${path} cache-control`).toBe(g.rest);
      if (!Number.isNaN(g.sMaxAge)) expect(g.sMaxAge - h.sMaxAge, path).toBeOneOf([0, 1]);
    };

    it("answers HEAD like GET: same status and headers, no body", async () => {
      const paths = [
        ...ENDPOINTS,
        "/content/v1/pages/a",
        "/content/v1/pages/nope",
        "/content/v1/blog/no-such-post",
        "/content/v1/pages/home?lang=fr",
        "/content/v1/page/home",
      ];
      // Uncompressed, so the GET body's length is the length HEAD must announce.
      const identity = { "accept-encoding": "identity" };
      for (const path of paths) {
        const got = await get(path, { headers: identity });
        const head = await get(path, { method: "HEAD", headers: identity });
        expect(head.status, path).toBe(got.status);
        expect(head.text).toBe("");
        expectSameHeaders(path, head.headers, got.headers);
        if (got.status === 200) {
          expect(Number(head.headers.get("content-length"))).toBe(
            new TextEncoder().encode(got.text).byteLength,
          );
        }
        // Compressed: the same headers, the encoding's among them.
        const br = { "accept-encoding": "br" };
        const gotBr = await get(path, { headers: br });
        const headBr = await get(path, { method: "HEAD", headers: br });
        expectSameHeaders(path, headBr.headers, gotBr.headers);
      }
      expectError(await get("/content/v1/pages/home", { key: null }), 401, {
        message: "invalid_key",
      });
      expect((await get("/content/v1/pages/home", { key: null, method: "HEAD" })).status).toBe(401);
    });
  });

  describe("CORS", () => {
    const ALLOWED_HEADERS = ["content-type", "if-none-match", "x-crm-key"];
    const list = (value: string | null) =>
      (value ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean).sort();

    it("answers a preflight from any origin without a key: GET and OPTIONS, three headers", async () => {
      for (const path of [...ENDPOINTS, "/content/v1/pages/a"]) {
        const answer = await get(path, {
          method: "OPTIONS",
          key: null,
          headers: {
            origin: "https://any-site.example",
            "access-control-request-method": "GET",
            "access-control-request-headers": "x-crm-key, if-none-match",
          },
        });
        expect(answer.status).toBeGreaterThanOrEqual(200);
        expect(answer.status).toBeLessThan(300);
        expect(answer.headers.get("access-control-allow-origin")).toBe("*");
        expect(list(answer.headers.get("access-control-allow-methods"))).toEqual([
          "get",
          "options",
        ]);
        expect(list(answer.headers.get("access-control-allow-headers"))).toEqual(ALLOWED_HEADERS);
        expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
      }
    });

    it("allows no other custom header: the preflight lists only the three", async () => {
      const answer = await get("/content/v1/pages/home", {
        method: "OPTIONS",
        key: null,
        headers: {
          origin: "https://any-site.example",
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-crm-key, x-custom",
        },
      });
      expect(list(answer.headers.get("access-control-allow-headers"))).not.toContain("x-custom");
      expect(list(answer.headers.get("access-control-allow-methods"))).not.toContain("post");
    });

    it("sends access-control-allow-origin * on answers and on every error", async () => {
      const origin = { origin: "https://elsewhere.example" };
      const answers = [
        await get("/content/v1/pages/home", { headers: origin }),
        await get("/content/v1/pages/a", { headers: origin }),
        await get("/content/v1/pages/nope", { headers: origin }),
        await get("/content/v1/pages/home", { key: null, headers: origin }),
        await get("/content/v1/pages/home", { method: "DELETE", headers: origin }),
        await get("/content/v1/page/home", { headers: origin }),
      ];
      const etag = answers[0].headers.get("etag")!;
      answers.push(
        await get("/content/v1/pages/home", { headers: { ...origin, "if-none-match": etag } }),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 400, 404, 401, 405, 404, 304]);
      for (const answer of answers) {
        expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      }
    });
  });

  describe("error contract", () => {
    it("gives every error row its status, message, extra fields, JSON type and no-store", async () => {
      const rows: [string, CallOptions, number, Record<string, unknown>][] = [
        ["/content/v1/sections/a-b", {}, 400, { message: "invalid_marker" }],
        ["/content/v1/blocks/xy?lang=en,EN", {}, 400, { message: "invalid_lang", lang: "EN" }],
        ["/content/v1/langs", { key: "pk_short" }, 401, { message: "invalid_key" }],
        ["/content/v1/pages/nope", {}, 404, { message: "page_not_found" }],
        ["/content/v1/sections/nope", {}, 404, { message: "section_not_found" }],
        ["/content/v1/blocks/nope", {}, 404, { message: "block_not_found" }],
        ["/content/v1/blog/nope", {}, 404, { message: "post_not_found" }],
        ["/content/v1/blog", { method: "PUT" }, 405, { message: "method_not_allowed" }],
      ];
      for (const [path, options, status, body] of rows) {
        expectError(await get(path, options), status, body);
      }
      const unknown = await get("/content/v1/blog?lang=xx");
      expectError(unknown, 400, {
        message: "unknown_lang",
        lang: "xx",
        unknown: ["xx"],
        available: ["en", "de", "pt-BR"],
      });
      const many = Array.from({ length: 51 }, (_, i) => `a${String.fromCharCode(97 + (i % 26))}`);
      expectError(await get(`/content/v1/blog?lang=${many.join(",")}`), 400, {
        message: "too_many_langs",
        max: 50,
      });
    });

    it("answers the same error again to the same request (not cured by retrying)", async () => {
      for (const path of ["/content/v1/pages/a", "/content/v1/pages/nope"]) {
        const first = await get(path);
        const second = await get(path);
        expect(second.status).toBe(first.status);
        expect(second.body).toEqual(first.body);
      }
    });

    // Last: it stops content-service.
    it("answers a failure of the service side with a JSON 5xx", async () => {
      const content = sys.system.services.find((s) => s.name === "content")!;
      await content.close();
      const answer = await get("/content/v1/pages/home?lang=de,en");
      expect(answer.status).toBeGreaterThanOrEqual(500);
      expect(answer.status).toBeLessThan(600);
      expect(typeof answer.body.message).toBe("string");
      expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
      expect(captured.find("content request failed")).toHaveLength(1);
    });
  });
});
