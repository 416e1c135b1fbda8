/**
 * The one way bodies are compressed: brotli and gzip by node:zlib (Deno
 * implements it natively; synchronous calls cost no promise and stream setup,
 * and it offers brotli's quality setting, which CompressionStream does not).
 * The gateway's answers (services/gateway/compression.ts) and the browser
 * bundles' size budgets (browser_bundle.ts) both use it.
 */
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from "node:zlib";
import { promisify } from "node:util";

export type Compression = "br" | "gzip";

/**
 * Brotli quality 5: measured on 33 KB of the content benchmark's JSON, it
 * takes about 2 ms and makes 851 bytes; quality 11 (the default) about 180 ms
 * for 796 bytes, and gzip level 6 0.4 ms for 1324 bytes. Quality 5 keeps a
 * cached answer's first compressed read, and every compressed report, cheap.
 */
const BROTLI_OPTIONS = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: 1 },
};
const GZIP_OPTIONS = { level: 6 };

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

const encoder = new TextEncoder();
const bytesOf = (body: string | Uint8Array) =>
  typeof body === "string" ? encoder.encode(body) : body;

/** The body compressed at once, for bodies made once and served often. */
export function compressSync(body: string | Uint8Array, coding: Compression): Uint8Array {
  const bytes = bytesOf(body);
  const out = coding === "br"
    ? brotliCompressSync(bytes, BROTLI_OPTIONS)
    : gzipSync(bytes, GZIP_OPTIONS);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** The body compressed off the event loop, for an answer made for one request. */
export async function compressAsync(
  body: string | Uint8Array,
  coding: Compression,
): Promise<Uint8Array> {
  const bytes = bytesOf(body);
  const out = coding === "br"
    ? await brotliAsync(bytes, BROTLI_OPTIONS)
    : await gzipAsync(bytes, GZIP_OPTIONS);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
