/**
 * A file the gateway serves as it is (widget.js, the dashboard's files):
 * read once at start-up, compressed once in br and gzip, with a strong ETag
 * per encoding and conditional requests (precompressed.ts). Its cache policy
 * and CORS headers are its route's (routes/files.ts).
 */
import { etagOf } from "../lib/etag.ts";
import type { Handler } from "./http.ts";
import { fileAnswer, Precompressed } from "./precompressed.ts";
import { cacheControlOf } from "./routes/table.ts";

export interface StaticAsset {
  file: Precompressed;
  contentType: string;
}

/** A file and its encodings, all made now. */
export function staticAsset(body: Uint8Array, contentType: string): StaticAsset {
  // Any file is compressed for a client that allows it, however short.
  const file = new Precompressed(body, { etag: etagOf(body), compressFrom: 0 }).precompress();
  return { file, contentType };
}

/** The handler of a file's GET and HEAD. */
export function assetHandler(asset: StaticAsset): Handler {
  return (ctx) => {
    const { method, cors } = ctx.match!;
    return fileAnswer(ctx.request, asset.file, asset.contentType, {
      "cache-control": cacheControlOf(method.cache),
      ...cors,
    });
  };
}
