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
 * The bytes are compressed by services/lib/compress.ts; a body served many
 * times is kept with its encodings in a Precompressed (precompressed.ts).
 */
import { compressAsync } from "../lib/compress.ts";
import { boundedMemo } from "../lib/memo.ts";
import { etagMatches } from "../lib/etag.ts";

export type Coding = "br" | "gzip" | "identity";

/** JSON answers at least this long are compressed (when the client allows). */
export const COMPRESS_MIN_BYTES = 1024;

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
