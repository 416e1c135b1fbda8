/**
 * Site keys (pk_ + 32 hex), secret keys (sk_ + 48 hex) and report keys (rk_ +
 * 48 hex, reading the reports of one site). Keys are stored and exported only
 * as SHA-256 hashes, written "sha256:<64 hex>". A fast hash is safe here
 * because keys are random: 128 and 192 bits of entropy make
 * guessing a key from its hash as hopeless as guessing the key, so the slow,
 * salted hashes meant for human passwords would add cost and nothing else.
 * A fast, unsalted hash also lets a key be found by an index lookup.
 */
import { createHash } from "node:crypto";

export const SITE_KEY = /^pk_[a-f0-9]{32}$/;
export const SECRET_KEY = /^sk_[a-f0-9]{48}$/;
export const REPORT_KEY = /^rk_[a-f0-9]{48}$/;
/** A preview key reads the content API as a site key does, drafts and scheduled posts too. */
export const PREVIEW_KEY = /^pv_[a-f0-9]{32}$/;
export const KEY_HASH = /^sha256:[a-f0-9]{64}$/;

export type KeyKind = "site" | "secret" | "report" | "preview";

/** Each kind's format, and its prefix. */
export const KEY_FORMATS: Record<KeyKind, { pattern: RegExp; prefix: string; bytes: number }> = {
  site: { pattern: SITE_KEY, prefix: "pk_", bytes: 16 },
  secret: { pattern: SECRET_KEY, prefix: "sk_", bytes: 24 },
  report: { pattern: REPORT_KEY, prefix: "rk_", bytes: 24 },
  preview: { pattern: PREVIEW_KEY, prefix: "pv_", bytes: 16 },
};

export function hashKey(key: string): string {
  return "sha256:" + createHash("sha256").update(key).digest("hex");
}

export function generateKey(kind: KeyKind): string {
  const format = KEY_FORMATS[kind];
  const bytes = crypto.getRandomValues(new Uint8Array(format.bytes));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return format.prefix + hex;
}

/** The stored form of a manifest key entry: a key is hashed, an exported hash is kept. */
export function storedKeyHash(entry: string): string {
  return KEY_HASH.test(entry) ? entry : hashKey(entry);
}
