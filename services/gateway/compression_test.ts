import { describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import {
  codingEtag,
  codingFor,
  COMPRESS_MIN_BYTES,
  jsonAnswer,
  matchesAnyCoding,
  negotiate,
} from "./compression.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const large = JSON.stringify({
  items: Array.from({ length: 100 }, (_, i) => ({ i, name: `n${i}` })),
});

describe("Accept-Encoding", () => {
  it("prefers br, then gzip, and honours q=0 and *", () => {
    expect(codingFor("gzip, deflate, br")).toBe("br");
    expect(codingFor("gzip,br")).toBe("br");
    expect(codingFor("gzip")).toBe("gzip");
    expect(codingFor("br;q=0, gzip;q=0.5")).toBe("gzip");
    expect(codingFor("BR")).toBe("br");
    expect(codingFor("*")).toBe("br");
    expect(codingFor("*, br;q=0")).toBe("gzip");
    expect(codingFor("*;q=0")).toBe("identity");
    expect(codingFor("identity")).toBe("identity");
    expect(codingFor("deflate")).toBe("identity");
    expect(codingFor("gzip;q=0")).toBe("identity");
  });

  it("compresses only bodies of 1 KB or more", () => {
    const headers = new Headers({ "accept-encoding": "br" });
    expect(negotiate(headers, COMPRESS_MIN_BYTES - 1)).toBe("identity");
    expect(negotiate(headers, COMPRESS_MIN_BYTES)).toBe("br");
    expect(negotiate(new Headers(), 100_000)).toBe("identity");
  });
});

describe("ETags of encodings", () => {
  it("gives each encoding its own strong tag and matches any of them", () => {
    const etag = '"abc"';
    expect(codingEtag(etag, "identity")).toBe(etag);
    expect(codingEtag(etag, "br")).toBe('"abc-br"');
    expect(codingEtag(etag, "gzip")).toBe('"abc-gz"');
    for (const tag of ['"abc"', '"abc-br"', '"abc-gz"', 'W/"abc-br"', '"x", "abc-gz"', "*"]) {
      expect(matchesAnyCoding(tag, etag), tag).toBe(true);
    }
    for (const tag of ['"abd"', '"abc-xx"', '"ab"', "", null]) {
      expect(matchesAnyCoding(tag, etag), String(tag)).toBe(false);
    }
  });
});

describe("JSON answers made for one request", () => {
  it("answers JSON compressed with Vary when large, plain when small", async () => {
    const request = new Request("http://h/", { headers: { "accept-encoding": "gzip" } });
    const big = await jsonAnswer(request, 200, JSON.parse(large), { "cache-control": "no-store" });
    expect(big.headers.get("content-encoding")).toBe("gzip");
    expect(big.headers.get("vary")).toBe("Accept-Encoding");
    expect(big.headers.get("cache-control")).toBe("no-store");
    expect(text(gunzipSync(new Uint8Array(await big.arrayBuffer())))).toBe(large);

    const plain = await jsonAnswer(new Request("http://h/"), 200, JSON.parse(large), {});
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    expect(await plain.text()).toBe(large);

    const small = await jsonAnswer(request, 200, { ok: true }, {});
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(small.headers.get("vary")).toBeNull();
  });
});
