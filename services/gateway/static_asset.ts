/**
 * A file the gateway serves as it is (widget.js): read once at start-up,
 * gzipped once, with a strong ETag per encoding, conditional requests and a
 * cache lifetime suited to a script tag that carries no version in its URL.
 */
import { etagMatches, etagOf } from "../lib/etag.ts";
import { gzip } from "../lib/gzip.ts";
import type { Handler } from "./http.ts";
import { jsonError } from "./http.ts";

export interface StaticAsset {
  body: Uint8Array;
  gzip: Uint8Array;
  etag: string;
  gzipEtag: string;
  contentType: string;
}

export async function staticAsset(body: Uint8Array, contentType: string): Promise<StaticAsset> {
  return {
    body,
    gzip: await gzip(body),
    etag: etagOf(body),
    gzipEtag: etagOf(body, "gz"),
    contentType,
  };
}

/**
 * Browsers revalidate after an hour (a cheap 304 thanks to the ETag) and may
 * keep using the old copy for a day while they do, so a new widget reaches
 * every site within about an hour without a versioned URL.
 */
export const SCRIPT_CACHE_CONTROL = "public, max-age=3600, stale-while-revalidate=86400";

export function assetHandler(asset: StaticAsset, cacheControl: string): Handler {
  return (ctx) => {
    const method = ctx.request.method;
    if (method !== "GET" && method !== "HEAD") {
      return jsonError(405, { message: "method_not_allowed" }, { allow: "GET, HEAD" });
    }
    const gzip = /\bgzip\b/.test(ctx.request.headers.get("accept-encoding") ?? "");
    const headers: Record<string, string> = {
      "content-type": asset.contentType,
      "cache-control": cacheControl,
      "etag": gzip ? asset.gzipEtag : asset.etag,
      "vary": "Accept-Encoding",
      // Sites may load the script with crossorigin (for SRI).
      "access-control-allow-origin": "*",
    };
    const inm = ctx.request.headers.get("if-none-match");
    if (etagMatches(inm, asset.etag) || etagMatches(inm, asset.gzipEtag)) {
      return new Response(null, { status: 304, headers });
    }
    const body = gzip ? asset.gzip : asset.body;
    if (gzip) headers["content-encoding"] = "gzip";
    headers["content-length"] = String(body.byteLength);
    return new Response(method === "HEAD" ? null : body as BodyInit, { status: 200, headers });
  };
}
