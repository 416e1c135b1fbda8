/**
 * GET /openapi.json: the document of document.ts as JSON, made once when the
 * gateway starts with its br and gzip forms, a strong ETag per encoding, and
 * conditional requests answered 304 (precompressed.ts). Its CORS and cache
 * policies are the route table's (routes/files.ts).
 */
import { etagOf } from "../../lib/etag.ts";
import { type Handler, JSON_TYPE } from "../http.ts";
import { COMPRESS_MIN_BYTES } from "../compression.ts";
import { fileAnswer, Precompressed } from "../precompressed.ts";
import { cacheControlOf } from "../routes/table.ts";
import { OPENAPI_DOCUMENT } from "./document.ts";

export function openApiHandler(document: unknown = OPENAPI_DOCUMENT): Handler {
  const text = JSON.stringify(document);
  const bytes = new TextEncoder().encode(text);
  const file = new Precompressed(text, {
    etag: etagOf(bytes),
    byteLength: bytes.byteLength,
    compressFrom: COMPRESS_MIN_BYTES,
  }).precompress();
  return (ctx) => {
    const { cors, method } = ctx.match!;
    return fileAnswer(ctx.request, file, JSON_TYPE, {
      ...cors,
      "cache-control": cacheControlOf(method.cache),
    });
  };
}
