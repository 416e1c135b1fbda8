/**
 * The gateway serving widget.js and the dashboard's files: validators,
 * conditional requests, compression (br and gzip by Accept-Encoding's
 * q-values), cache lifetime.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { WIDGET_OUTPUT } from "../widget/build.ts";
import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "../dashboard/build.ts";
import { readBuiltWidget } from "../services/gateway/main.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  describe("GET /widget.js", () => {
    let sys: TestSystem;
    let built: Uint8Array;
    beforeAll(async () => {
      sys = await startTestSystem({ storage });
      built = await Deno.readFile(WIDGET_OUTPUT);
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("serves the built script with a strong ETag and a script-tag cache lifetime", async () => {
      const response = await sys.get("/widget.js", { headers: { "accept-encoding": "identity" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
      expect(response.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{20,}"$/);
      expect(response.headers.get("cache-control")).toBe(
        "public, max-age=3600, stale-while-revalidate=86400",
      );
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(built);
    });

    it("answers 304 to If-None-Match, also for HEAD", async () => {
      const first = await sys.get("/widget.js", { headers: { "accept-encoding": "identity" } });
      await first.body?.cancel();
      const etag = first.headers.get("etag")!;
      const again = await sys.get("/widget.js", {
        headers: { "if-none-match": etag, "accept-encoding": "identity" },
      });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      const head = await sys.get("/widget.js", {
        method: "HEAD",
        headers: { "accept-encoding": "identity" },
      });
      expect(head.status).toBe(200);
      expect(Number(head.headers.get("content-length"))).toBe(built.byteLength);
    });

    it("sends it gzipped when the browser accepts gzip, with its own validator", async () => {
      const plain = await sys.get("/widget.js", { headers: { "accept-encoding": "identity" } });
      await plain.body?.cancel();
      const raw = await fetch(sys.url + "/widget.js", { headers: { "accept-encoding": "gzip" } });
      expect(raw.headers.get("content-encoding")).toBe("gzip");
      expect(raw.headers.get("vary")).toBe("Accept-Encoding");
      expect(raw.headers.get("etag")).not.toBe(plain.headers.get("etag"));
      // fetch decodes gzip itself: the bytes are the script.
      expect(new Uint8Array(await raw.arrayBuffer())).toEqual(built);
    });
  });

  describe("the widget and the dashboard's files", () => {
    let sys: TestSystem;
    const files = [
      ["/widget.js", WIDGET_OUTPUT],
      ["/dashboard/dashboard.js", DASHBOARD_SCRIPT],
      ["/dashboard/dashboard.css", DASHBOARD_STYLE],
    ] as const;
    beforeAll(async () => {
      sys = await startTestSystem({ storage });
    });
    afterAll(async () => {
      await sys?.close();
    });

    const get = (path: string, headers: Record<string, string>) => sys.get(path, { headers });

    it("offer br, then gzip, and never a coding the request gives q=0", async () => {
      for (const [path, source] of files) {
        const built = await Deno.readFile(source);
        for (
          const [accept, coding] of [
            ["gzip, deflate, br", "br"],
            ["br;q=0.5, gzip;q=0.2", "br"],
            ["gzip", "gzip"],
            ["br;q=0, gzip", "gzip"],
            ["gzip;q=0", null],
            ["br;q=0, gzip;q=0", null],
            ["identity", null],
          ] as const
        ) {
          const response = await get(path, { "accept-encoding": accept });
          expect(response.status, `${path} ${accept}`).toBe(200);
          expect(response.headers.get("content-encoding"), `${path} ${accept}`).toBe(coding);
          expect(response.headers.get("vary")).toBe("Accept-Encoding");
          // fetch decodes what it is sent: the bytes are the file.
          expect(new Uint8Array(await response.arrayBuffer())).toEqual(built);
        }
      }
    });

    it("give each encoding its own strong ETag and answer 304 for any of them", async () => {
      for (const [path] of files) {
        const tags = [];
        for (const accept of ["br", "gzip", "identity"]) {
          const response = await get(path, { "accept-encoding": accept });
          await response.body?.cancel();
          tags.push(response.headers.get("etag")!);
        }
        expect(new Set(tags).size, path).toBe(3);
        for (const tag of tags) expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        for (const tag of tags) {
          for (const accept of ["br", "gzip", "identity"]) {
            const again = await get(path, { "if-none-match": tag, "accept-encoding": accept });
            expect(again.status, `${path} ${tag} ${accept}`).toBe(304);
            expect(await again.text()).toBe("");
          }
        }
      }
    });
  });

  describe("the gateway without a built widget", () => {
    it("refuses to start, naming the task that builds it", async () => {
      const missing = new URL(`file://${await Deno.makeTempDir()}/widget.js`);
      await expect(readBuiltWidget(missing)).rejects.toThrow(
        `${missing.pathname} is missing: build the widget with \`deno task widget\``,
      );
    });
  });
});
