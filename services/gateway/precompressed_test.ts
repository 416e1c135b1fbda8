import { describe, expect, it } from "vitest";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { fileAnswer, Precompressed } from "./precompressed.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const large = JSON.stringify({
  items: Array.from({ length: 100 }, (_, i) => ({ i, name: `n${i}` })),
});
const body = () => new Precompressed(large, { etag: '"e"', compressFrom: 1024 });

const get = (headers: Record<string, string>, method = "GET") =>
  new Request("http://h/file", { method, headers });

describe("a precompressed body", () => {
  it("makes each encoding once, on the first ask, and keeps it", () => {
    const kept = body();
    expect(kept.encodedBytes).toBe(0);
    const br = kept.bodyOf("br") as Uint8Array;
    expect(kept.bodyOf("br")).toBe(br);
    expect(kept.encodedBytes).toBe(br.byteLength);
    expect(text(brotliDecompressSync(br))).toBe(large);
    expect(text(gunzipSync(kept.bodyOf("gzip") as Uint8Array))).toBe(large);
    expect(kept.bodyOf("identity")).toBe(large);
    expect(kept.lengthOf("identity")).toBe(new TextEncoder().encode(large).byteLength);
  });

  it("makes both at once when asked to, and none for a body under its threshold", () => {
    const made = body().precompress();
    expect(made.encodedBytes).toBeGreaterThan(0);
    const small = new Precompressed("{}", { etag: '"s"', compressFrom: 1024 }).precompress();
    expect(small.encodedBytes).toBe(0);
    expect(small.compressible).toBe(false);
    expect(small.codingFor(new Headers({ "accept-encoding": "br" }))).toBe("identity");
  });

  it("honours q-values: br first, q=0 never, identity when neither is allowed", () => {
    const kept = body();
    const coding = (value: string) => kept.codingFor(new Headers({ "accept-encoding": value }));
    expect(coding("gzip, deflate, br")).toBe("br");
    expect(coding("gzip")).toBe("gzip");
    expect(coding("gzip;q=0")).toBe("identity");
    expect(coding("br;q=0, gzip")).toBe("gzip");
    expect(coding("br;q=0, gzip;q=0")).toBe("identity");
    expect(coding("*;q=0, identity")).toBe("identity");
    expect(kept.codingFor(new Headers())).toBe("identity");
  });
});

describe("a file's answer", () => {
  const file = body().precompress();
  const answer = (headers: Record<string, string>, method = "GET") =>
    fileAnswer(get(headers, method), file, "text/plain", { "cache-control": "no-cache" });

  it("sends the allowed coding with its own strong ETag, length and Vary", async () => {
    const etags = new Set<string>();
    for (const [accept, coding] of [["br", "br"], ["gzip", "gzip"], ["identity", null]] as const) {
      const response = answer({ "accept-encoding": accept });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-encoding")).toBe(coding);
      expect(response.headers.get("content-type")).toBe("text/plain");
      expect(response.headers.get("vary")).toBe("Accept-Encoding");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(response.headers.get("content-length")).toBe(String(bytes.byteLength));
      const decoded = coding === "br"
        ? brotliDecompressSync(bytes)
        : coding === "gzip"
        ? gunzipSync(bytes)
        : bytes;
      expect(text(decoded)).toBe(large);
      etags.add(response.headers.get("etag")!);
    }
    expect([...etags]).toEqual(['"e-br"', '"e-gz"', '"e"']);
  });

  it("never sends gzip to gzip;q=0", async () => {
    const response = answer({ "accept-encoding": "gzip;q=0" });
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(await response.text()).toBe(large);
  });

  it("answers 304 for the tag of any encoding, whatever the request accepts", () => {
    for (const tag of ['"e"', '"e-br"', '"e-gz"', 'W/"e-gz"']) {
      for (const accept of ["br", "gzip", "identity"]) {
        const response = answer({ "if-none-match": tag, "accept-encoding": accept });
        expect(response.status, `${tag} ${accept}`).toBe(304);
        expect(response.body).toBeNull();
        expect(response.headers.get("etag")).toBe(
          file.etagOf(file.codingFor(new Headers({ "accept-encoding": accept }))),
        );
      }
    }
    expect(answer({ "if-none-match": '"other"' }).status).toBe(200);
  });

  it("answers HEAD with the headers of GET and no body", () => {
    const response = answer({ "accept-encoding": "br" }, "HEAD");
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
    expect(response.headers.get("content-length")).toBe(String(file.lengthOf("br")));
  });
});
