/**
 * Compression of JSON answers: a body of COMPRESS_MIN_BYTES or more goes out
 * as `br` or `gzip` when the request's Accept-Encoding allows it (`br`
 * first: a third smaller than gzip on the content benchmark's JSON).
 * Smaller bodies gain too little to pay for the work and the header bytes.
 *
 * Each encoding is its own representation with its own strong ETag (the
 * body's tag with `-br` or `-gz` added, as for the widget script), since the
 * bytes differ; If-None-Match with the tag of any encoding of the same body
 * is a match (304), as RFC 9110 allows a server that knows they are one
 * resource state.
 *
 * node:zlib does the work: Deno implements it natively, synchronous calls
 * cost no promise and stream setup (CompressionStream's), and it offers
 * brotli's quality setting, which CompressionStream does not.
 */
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from "node:zlib";
import { promisify } from "node:util";
import { boundedMemo } from "../lib/memo.ts";
import { etagMatches } from "../lib/etag.ts";

export type Coding = "br" | "gzip" | "identity";

/** JSON answers at least this long are compressed (when the client allows). */
export const COMPRESS_MIN_BYTES = 1024;

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

/**
 * The coding for an Accept-Encoding header: `br` when allowed, else `gzip`,
 * else identity. A coding is allowed when named (or matched by `*`) with a
 * q-value above 0. Clients send the same few headers, so answers are remembered.
 */
export const codingFor: (acceptEncoding: string) => Coding = boundedMemo(
  (header) => {
    const q = new Map<string, number>();
    for (const part of header.split(",")) {
      const [name, ...params] = part.trim().toLowerCase().split(";");
      if (!name) continue;
      let weight = 1;
      for (const param of params) {
        const [key, value] = param.trim().split("=");
        if (key === "q") weight = Number(value);
      }
      q.set(name, Number.isFinite(weight) ? weight : 0);
    }
    const allowed = (coding: string) => (q.get(coding) ?? q.get("*") ?? 0) > 0;
    if (allowed("br")) return "br";
    if (allowed("gzip") || allowed("x-gzip")) return "gzip";
    return "identity";
  },
  { maxEntries: 200, maxInputLength: 256 },
);

/** The coding a request accepts, for a body of byteLength. */
export function negotiate(headers: Headers, byteLength: number): Coding {
  if (byteLength < COMPRESS_MIN_BYTES) return "identity";
  const header = headers.get("accept-encoding");
  return header ? codingFor(header) : "identity";
}

const encoder = new TextEncoder();
const bytesOf = (body: string | Uint8Array) =>
  typeof body === "string" ? encoder.encode(body) : body;

/** The body compressed at once, for answers computed once and kept (cached answers). */
export function compressSync(body: string | Uint8Array, coding: "br" | "gzip"): Uint8Array {
  const bytes = bytesOf(body);
  const out = coding === "br"
    ? brotliCompressSync(bytes, BROTLI_OPTIONS)
    : gzipSync(bytes, GZIP_OPTIONS);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** The body compressed off the event loop, for an answer made for one request. */
export async function compressAsync(
  body: string | Uint8Array,
  coding: "br" | "gzip",
): Promise<Uint8Array> {
  const bytes = bytesOf(body);
  const out = coding === "br"
    ? await brotliAsync(bytes, BROTLI_OPTIONS)
    : await gzipAsync(bytes, GZIP_OPTIONS);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

const SUFFIX: Record<"br" | "gzip", string> = { br: "-br", gzip: "-gz" };

/** The ETag of a body's encoding: the body's strong tag with the coding's suffix. */
export function codingEtag(etag: string, coding: Coding): string {
  if (coding === "identity") return etag;
  return `${etag.slice(0, -1)}${SUFFIX[coding]}"`;
}

/**
 * True when If-None-Match names the body's tag or the tag of any of its
 * encodings (weak comparison, as RFC 9110 asks for If-None-Match).
 */
export function matchesAnyCoding(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return etagMatches(ifNoneMatch, etag) || etagMatches(ifNoneMatch, codingEtag(etag, "br")) ||
    etagMatches(ifNoneMatch, codingEtag(etag, "gzip"));
}

/** `Vary` with Accept-Encoding added. */
export function varyWithEncoding(vary: string | undefined): string {
  return vary ? `${vary}, Accept-Encoding` : "Accept-Encoding";
}

/**
 * A JSON answer made for one request (not kept): compressed when it is large
 * enough and the client allows, with Vary naming Accept-Encoding whenever it
 * is large enough to be compressed for someone.
 */
export async function jsonAnswer(
  request: Request,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<Response> {
  const text = JSON.stringify(body);
  const bytes = encoder.encode(text);
  const out: Record<string, string> = { ...headers, "content-type": "application/json" };
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return new Response(text, { status, headers: out });
  out.vary = varyWithEncoding(out.vary);
  const coding = negotiate(request.headers, bytes.byteLength);
  if (coding === "identity") return new Response(text, { status, headers: out });
  out["content-encoding"] = coding;
  return new Response(await compressAsync(bytes, coding) as BodyInit, { status, headers: out });
}
