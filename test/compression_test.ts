/**
 * Compressed JSON answers over HTTP: content answers of 1 KB or more in br
 * (preferred) or gzip as Accept-Encoding allows, with Vary, an ETag per
 * encoding and 304 for the tag of any encoding; reports compressed too;
 * small answers never; the headers browsers may read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request as httpRequest } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { ACME_KEY, acmeSite } from "./helpers/content.ts";
import { reportKeyOf, statsSite } from "./helpers/stats.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const REPORT_KEY = reportKeyOf("zipped");

  const PAGE = "/content/v1/pages/home";
  const SMALL = "/content/v1/langs";

  /** The bytes on the wire, not decoded (fetch decodes what it is sent). */
  function raw(
    url: string,
    headers: Record<string, string>,
    method = "GET",
    body?: string,
  ): Promise<
    { status: number; headers: Record<string, string | string[] | undefined>; bytes: Uint8Array }
  > {
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method, headers }, (res) => {
        const chunks: Uint8Array[] = [];
        res.on("data", (chunk: Uint8Array) => chunks.push(chunk));
        res.on("end", () => {
          const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
          let at = 0;
          for (const chunk of chunks) {
            bytes.set(chunk, at);
            at += chunk.byteLength;
          }
          resolve({ status: res.statusCode!, headers: res.headers, bytes });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

  describe("compressed JSON answers", () => {
    let sys: TestSystem;
    let reports: TestSystem;
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(sys.url + path, { headers: { "x-crm-key": ACME_KEY, ...headers } });

    beforeAll(async () => {
      sys = await startTestSystem({ storage, seed: await acmeSite() });
      reports = await startTestSystem({
        storage,
        seed: await statsSite("zipped", "Europe/Berlin"),
      });
    });
    afterAll(async () => {
      await sys?.close();
      await reports?.close();
    });

    it("sends a large content answer in br when allowed, else gzip, else as it is", async () => {
      const plain = await raw(sys.url + PAGE, { "x-crm-key": ACME_KEY });
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.bytes.byteLength).toBeGreaterThanOrEqual(1024);
      expect(plain.headers["vary"]).toBe("x-crm-key, Accept-Encoding");
      const identity = text(plain.bytes);

      const br = await raw(sys.url + PAGE, {
        "x-crm-key": ACME_KEY,
        "accept-encoding": "gzip, br",
      });
      expect(br.headers["content-encoding"]).toBe("br");
      expect(br.headers["vary"]).toBe("x-crm-key, Accept-Encoding");
      expect(text(brotliDecompressSync(br.bytes))).toBe(identity);
      expect(br.bytes.byteLength).toBeLessThan(plain.bytes.byteLength / 2);

      const gzip = await raw(sys.url + PAGE, { "x-crm-key": ACME_KEY, "accept-encoding": "gzip" });
      expect(gzip.headers["content-encoding"]).toBe("gzip");
      expect(text(gunzipSync(gzip.bytes))).toBe(identity);

      const refused = await raw(sys.url + PAGE, {
        "x-crm-key": ACME_KEY,
        "accept-encoding": "br;q=0, gzip;q=0",
      });
      expect(refused.headers["content-encoding"]).toBeUndefined();
      expect(text(refused.bytes)).toBe(identity);

      // A HEAD announces the length of the body a GET with the same Accept-Encoding gets.
      const head = await raw(
        sys.url + PAGE,
        { "x-crm-key": ACME_KEY, "accept-encoding": "br" },
        "HEAD",
      );
      expect(Number(head.headers["content-length"])).toBe(br.bytes.byteLength);
      expect(head.headers["content-encoding"]).toBe("br");
    });

    it("gives each encoding its own ETag and answers 304 for the tag of any of them", async () => {
      const tags: Record<string, string> = {};
      for (const coding of ["identity", "br", "gzip"]) {
        const answer = await get(PAGE, { "accept-encoding": coding });
        expect(answer.status).toBe(200);
        await answer.body?.cancel();
        tags[coding] = answer.headers.get("etag")!;
      }
      expect(tags.br).toBe(tags.identity.replace(/"$/, '-br"'));
      expect(tags.gzip).toBe(tags.identity.replace(/"$/, '-gz"'));
      for (const held of Object.values(tags)) {
        for (const coding of ["identity", "br", "gzip"]) {
          const again = await get(PAGE, { "accept-encoding": coding, "if-none-match": held });
          expect(again.status, `${held} ${coding}`).toBe(304);
          expect(await again.text()).toBe("");
          // The 304 names the representation this request would have got.
          expect(again.headers.get("etag")).toBe(tags[coding]);
          expect(again.headers.get("vary")).toBe("x-crm-key, Accept-Encoding");
        }
      }
      const other = await get(PAGE, { "accept-encoding": "br", "if-none-match": '"other-br"' });
      expect(other.status).toBe(200);
      await other.body?.cancel();
    });

    it("leaves answers under 1 KB uncompressed, with no Vary on Accept-Encoding", async () => {
      const small = await raw(sys.url + SMALL, { "x-crm-key": ACME_KEY, "accept-encoding": "br" });
      expect(small.bytes.byteLength).toBeLessThan(1024);
      expect(small.headers["content-encoding"]).toBeUndefined();
      expect(small.headers["vary"]).toBe("x-crm-key");
      const error = await raw(sys.url + PAGE, { "x-crm-key": "pk_nope", "accept-encoding": "br" });
      expect(error.status).toBe(401);
      expect(error.headers["content-encoding"]).toBeUndefined();
    });

    it("lets browsers read ETag and X-Request-Id on answers and errors", async () => {
      for (const answer of [await get(PAGE), await get(PAGE, { "x-crm-key": "pk_nope" })]) {
        await answer.body?.cancel();
        const exposed = answer.headers.get("access-control-expose-headers") ?? "";
        expect(exposed).toMatch(/\bETag\b/);
        expect(exposed).toMatch(/\bX-Request-Id\b/);
      }
      const stats = await fetch(`${reports.url}/stats/v1/site`, {
        headers: { "x-report-key": REPORT_KEY },
      });
      await stats.body?.cancel();
      expect(stats.headers.get("access-control-expose-headers")).toMatch(/X-Request-Id/);
    });

    it("compresses a large reports answer", async () => {
      const body = JSON.stringify({
        metrics: ["visitors", "pageviews"],
        date_range: "7d",
        dimensions: ["time:hour"],
        include: { time_labels: true },
      });
      const headers = { "x-report-key": REPORT_KEY, "content-type": "application/json" };
      const plain = await raw(`${reports.url}/stats/v1/query`, headers, "POST", body);
      expect(plain.status).toBe(200);
      expect(plain.bytes.byteLength).toBeGreaterThanOrEqual(1024);
      expect(plain.headers["vary"]).toBe("Accept-Encoding");
      const br = await raw(
        `${reports.url}/stats/v1/query`,
        { ...headers, "accept-encoding": "br" },
        "POST",
        body,
      );
      expect(br.headers["content-encoding"]).toBe("br");
      expect(br.headers["cache-control"]).toBe("no-store");
      expect(JSON.parse(text(brotliDecompressSync(br.bytes)))).toEqual(
        JSON.parse(text(plain.bytes)),
      );
    });
  });
});
