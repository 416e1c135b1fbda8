/**
 * The changes feed (GET /content/v1/changes): its cursors and the answer
 * made from the site's content and its recorded changes. Pure functions.
 *
 * A recorded change (storage's content.changes) has a sequence number, the
 * time it is in the feed (`at`: the import's time, or a scheduled post's
 * publishedAt) and the names its webhook message carries. A cursor holds the
 * last sequence number and the time of the answer that gave it; the changes
 * since it are those recorded after that number, or in the feed only after
 * that time (a scheduled post recorded earlier), and in the feed by now.
 *
 * A cursor is the two numbers and an HMAC of them keyed by the site, in
 * base64url: a cursor of another site, or a changed one, does not check.
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { isVisible } from "./blog.ts";
import type { ContentChanges } from "./changes.ts";
import type { SiteContent } from "./model.ts";

export interface Cursor {
  /** The last sequence number the answer included. */
  seq: number;
  /** Unix ms of the answer. */
  at: number;
}

export interface RecordedChange {
  seq: number;
  /** Unix ms from which the change is in the feed. */
  at: number;
  names: ContentChanges;
}

export interface ChangesAnswer extends ContentChanges {
  cursor: string;
  full: boolean;
}

const VERSION = 1;
const MAC_BYTES = 12;
const PAYLOAD_BYTES = 1 + 8 + 8;
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;

function mac(siteId: string, payload: Uint8Array): Uint8Array {
  const hmac = createHmac("sha256", `crm content changes cursor\u0000${siteId}`);
  return new Uint8Array(hmac.update(payload).digest().subarray(0, MAC_BYTES));
}

/** The cursor text of a position in the site's feed. */
export function encodeCursor(siteId: string, cursor: Cursor): string {
  const payload = new Uint8Array(PAYLOAD_BYTES);
  const view = new DataView(payload.buffer);
  view.setUint8(0, VERSION);
  view.setBigUint64(1, BigInt(cursor.seq));
  view.setBigUint64(9, BigInt(cursor.at));
  const bytes = new Uint8Array(PAYLOAD_BYTES + MAC_BYTES);
  bytes.set(payload);
  bytes.set(mac(siteId, payload), PAYLOAD_BYTES);
  return Buffer.from(bytes).toString("base64url");
}

/** The position a cursor text names, or undefined when this site did not give it out. */
export function decodeCursor(siteId: string, text: string): Cursor | undefined {
  if (!CURSOR.test(text)) return undefined;
  const bytes = new Uint8Array(Buffer.from(text, "base64url"));
  if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES) return undefined;
  // Base64url has more than one text for some byte strings: only the one we write counts.
  if (Buffer.from(bytes).toString("base64url") !== text) return undefined;
  const payload = bytes.subarray(0, PAYLOAD_BYTES);
  if (!timingSafeEqual(mac(siteId, payload), bytes.subarray(PAYLOAD_BYTES))) return undefined;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  if (view.getUint8(0) !== VERSION) return undefined;
  const seq = Number(view.getBigUint64(1));
  const at = Number(view.getBigUint64(9));
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(at)) return undefined;
  return { seq, at };
}

/** Whether a recorded change is in the feed at `now` and was not in the answer that gave `since`. */
export function isNewSince(change: RecordedChange, since: Cursor, now: number): boolean {
  return change.at <= now && (change.seq > since.seq || change.at > since.at);
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/** Every name the content API answers now: what a full answer lists. */
export function everything(site: SiteContent | undefined, now: number): ContentChanges {
  if (!site) return { pages: [], sections: [], blocks: [], posts: [] };
  return {
    pages: sorted(site.pages.keys()),
    sections: sorted(site.sections.keys()),
    blocks: sorted(
      [...site.sections.values()].flatMap((s) => s.blocks.map((b) => `${s.marker}/${b.marker}`)),
    ),
    posts: sorted(
      site.posts.filter((p) => isVisible(p, now, site.blog.scheduling)).map((p) => p.slug),
    ),
  };
}

/** The names of the changes since a cursor, each list sorted, without repeats. */
export function namesOf(changes: readonly RecordedChange[]): ContentChanges {
  return {
    pages: sorted(changes.flatMap((c) => c.names.pages)),
    sections: sorted(changes.flatMap((c) => c.names.sections)),
    blocks: sorted(changes.flatMap((c) => c.names.blocks)),
    posts: sorted(changes.flatMap((c) => c.names.posts)),
  };
}
