/**
 * One body served many times: its bytes, a strong ETag per encoding, and its
 * br and gzip forms each made once (at start for a file, on the first read
 * that asks for it for a cached answer) and kept beside it. The content
 * cache's answers, the OpenAPI document and the static files (widget.js, the
 * dashboard's files) are all served from one, by the rules of compression.ts:
 * the coding the request's Accept-Encoding allows (q-values honoured, `q=0`
 * never used), and 304 for If-None-Match with the tag of any encoding.
 */
import { compressSync } from "../lib/compress.ts";
import { type Coding, codingEtag, codingFor, matchesAnyCoding } from "./compression.ts";

export interface PrecompressedOptions {
  /** The body's strong ETag, when its maker gave one (content-service); else its digest's. */
  etag: string;
  /** Bodies shorter than this (bytes) are always sent as they are. */
  compressFrom: number;
  /** The body's length in bytes, when known (else counted). */
  byteLength?: number;
}

const encoder = new TextEncoder();

export class Precompressed {
  /** The body's length in bytes, as sent without an encoding. */
  readonly byteLength: number;
  readonly etag: string;
  readonly #compressFrom: number;
  #br?: Uint8Array;
  #gzip?: Uint8Array;

  /**
   * body: its text when it is UTF-8 (Deno sends a string with less work than
   * a byte array, which it copies for every response), else its bytes.
   */
  constructor(readonly body: string | Uint8Array, options: PrecompressedOptions) {
    this.byteLength = options.byteLength ??
      (typeof body === "string" ? encoder.encode(body).byteLength : body.byteLength);
    this.etag = options.etag;
    this.#compressFrom = options.compressFrom;
  }

  /** Whether some request may get it compressed, so that its answers vary by Accept-Encoding. */
  get compressible(): boolean {
    return this.byteLength >= this.#compressFrom;
  }

  /** Makes both encodings now (a file served from start-up on). */
  precompress(): this {
    if (this.compressible) {
      this.bodyOf("br");
      this.bodyOf("gzip");
    }
    return this;
  }

  /** The coding a request with these headers gets. */
  codingFor(headers: Headers): Coding {
    if (!this.compressible) return "identity";
    const header = headers.get("accept-encoding");
    return header ? codingFor(header) : "identity";
  }

  /** The body in a coding, made on the first ask and kept. */
  bodyOf(coding: Coding): string | Uint8Array {
    if (coding === "br") return this.#br ??= compressSync(this.body, "br");
    if (coding === "gzip") return this.#gzip ??= compressSync(this.body, "gzip");
    return this.body;
  }

  /** The length in bytes of the body in a coding. */
  lengthOf(coding: Coding): number {
    if (coding === "identity") return this.byteLength;
    return (this.bodyOf(coding) as Uint8Array).byteLength;
  }

  /** The strong ETag of the body in a coding (the body's tag, `-br` or `-gz` added). */
  etagOf(coding: Coding): string {
    return codingEtag(this.etag, coding);
  }

  /** True when If-None-Match names the tag of any of its encodings. */
  matches(ifNoneMatch: string | null): boolean {
    return matchesAnyCoding(ifNoneMatch, this.etag);
  }

  /** Bytes of the encodings made so far. */
  get encodedBytes(): number {
    return (this.#br?.byteLength ?? 0) + (this.#gzip?.byteLength ?? 0);
  }
}

/**
 * The answer to a GET or HEAD of a file served from a Precompressed body:
 * 304 for any of its tags, else the coding the request allows with its tag,
 * Content-Type, Content-Encoding and Content-Length. headers are the route's
 * own (cache policy, CORS); `Vary: Accept-Encoding` is added when it may be
 * compressed.
 */
export function fileAnswer(
  request: Request,
  file: Precompressed,
  contentType: string,
  headers: Readonly<Record<string, string>>,
): Response {
  const coding = file.codingFor(request.headers);
  const out: Record<string, string> = { ...headers, "etag": file.etagOf(coding) };
  if (file.compressible) out["vary"] = "Accept-Encoding";
  if (file.matches(request.headers.get("if-none-match"))) {
    return new Response(null, { status: 304, headers: out });
  }
  out["content-type"] = contentType;
  if (coding !== "identity") out["content-encoding"] = coding;
  out["content-length"] = String(file.lengthOf(coding));
  const body = request.method === "HEAD" ? null : file.bodyOf(coding) as BodyInit;
  return new Response(body, { status: 200, headers: out });
}
