/**
 * Entity tags: one strong tag per representation, a digest of its bytes (so
 * every replica gives the same bytes the same tag), and the comparison of
 * If-None-Match against it.
 */
import { createHash } from "node:crypto";

/**
 * The strong ETag of bytes: 27 base64url characters of their SHA-256 (160
 * bits), quoted. An encoding of the same bytes adds its name
 * (services/gateway/compression.ts, codingEtag).
 */
export function etagOf(bytes: Uint8Array): string {
  return `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
}

/** True when an If-None-Match header matches the entity tag (weak comparison, as RFC 9110 asks). */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === opaque);
}
