import { describe, expect, it } from "vitest";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { compressAsync, compressSync } from "./compress.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const large = JSON.stringify({
  items: Array.from({ length: 100 }, (_, i) => ({ i, name: `n${i}` })),
});

describe("compression", () => {
  it("round-trips through br and gzip, sync and async, text and bytes", async () => {
    expect(text(brotliDecompressSync(compressSync(large, "br")))).toBe(large);
    expect(text(gunzipSync(compressSync(large, "gzip")))).toBe(large);
    expect(text(brotliDecompressSync(await compressAsync(large, "br")))).toBe(large);
    expect(text(gunzipSync(await compressAsync(new TextEncoder().encode(large), "gzip")))).toBe(
      large,
    );
    expect(compressSync(large, "br").byteLength).toBeLessThan(large.length / 4);
  });
});
