/**
 * GET /openapi.json: the document of document.ts as JSON, made once when the
 * gateway starts, with a strong ETag per encoding, its compressed forms made
 * on the first read that asks for each, and conditional requests answered
 * 304. Any origin may read it (API tools in a browser).
 */
import { etagOf } from "../../lib/etag.ts";
import { type Handler, JSON_TYPE, jsonError } from "../http.ts";
import { CONTENT_CORS } from "../cors.ts";
import { codingEtag, compressSync, matchesAnyCoding, negotiate } from "../compression.ts";
import { OPENAPI_DOCUMENT } from "./document.ts";

export const OPENAPI_PATH = "/openapi.json";

export function openApiHandler(document: unknown = OPENAPI_DOCUMENT): Handler {
  const text = JSON.stringify(document);
  const bytes = new TextEncoder().encode(text);
  const etag = etagOf(bytes);
  const encoded: { br?: Uint8Array; gzip?: Uint8Array } = {};
  return (ctx) => {
    ctx.route = OPENAPI_PATH;
    const method = ctx.request.method;
    if (method !== "GET" && method !== "HEAD") {
      const refused = jsonError(405, { message: "method_not_allowed" }, { allow: "GET, HEAD" });
      for (const [name, value] of Object.entries(CONTENT_CORS)) refused.headers.set(name, value);
      return refused;
    }
    const coding = negotiate(ctx.request.headers, bytes.byteLength);
    const headers: Record<string, string> = {
      ...CONTENT_CORS,
      "etag": codingEtag(etag, coding),
      // Revalidated on every use: a new gateway version may change it, and a 304 is cheap.
      "cache-control": "no-cache",
      "vary": "Accept-Encoding",
    };
    if (matchesAnyCoding(ctx.request.headers.get("if-none-match"), etag)) {
      return new Response(null, { status: 304, headers });
    }
    headers["content-type"] = JSON_TYPE;
    let body: string | Uint8Array = text;
    if (coding !== "identity") {
      body = encoded[coding] ??= compressSync(bytes, coding);
      headers["content-encoding"] = coding;
    }
    if (method === "HEAD") {
      headers["content-length"] = String(
        typeof body === "string" ? bytes.byteLength : body.byteLength,
      );
      return new Response(null, { status: 200, headers });
    }
    return new Response(body as BodyInit, { status: 200, headers });
  };
}
