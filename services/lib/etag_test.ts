import { describe, expect, it } from "vitest";
import { etagMatches, etagOf } from "./etag.ts";
import { gzip } from "./gzip.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("etagOf", () => {
  it("gives the same bytes the same quoted tag, other bytes another", () => {
    const tag = etagOf(bytes('{"a":1}'));
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf(bytes('{"a":1}'))).toBe(tag);
    expect(etagOf(bytes('{"a":2}'))).not.toBe(tag);
  });

  it("names a variant of the same bytes", () => {
    const tag = etagOf(bytes("x"));
    expect(etagOf(bytes("x"), "gz")).toBe(`${tag.slice(0, -1)}-gz"`);
  });
});

describe("etagMatches", () => {
  const tag = '"abc"';
  it("matches the tag, a list holding it, its weak form and *", () => {
    expect(etagMatches('"abc"', tag)).toBe(true);
    expect(etagMatches('"x", "abc"', tag)).toBe(true);
    expect(etagMatches('W/"abc"', tag)).toBe(true);
    expect(etagMatches(" * ", tag)).toBe(true);
  });

  it("does not match another tag or no header", () => {
    expect(etagMatches('"abd"', tag)).toBe(false);
    expect(etagMatches(null, tag)).toBe(false);
    expect(etagMatches("", tag)).toBe(false);
  });
});

describe("gzip", () => {
  it("compresses to bytes that decompress to the original", async () => {
    const text = "widget ".repeat(200);
    const packed = await gzip(bytes(text));
    expect(packed.byteLength).toBeLessThan(text.length);
    const stream = new Blob([packed as BlobPart]).stream()
      .pipeThrough(new DecompressionStream("gzip"));
    expect(await new Response(stream).text()).toBe(text);
  });
});
