/**
 * Rendered content answers kept by the gateway, so a hot read costs neither a
 * call to content-service nor storage. Entries expire when content-service
 * said the answer stops being right (a scheduled post publishing), and an
 * import drops every entry of its site at once through the bus (an answer
 * fetched while the import landed is not kept). Concurrent requests for the
 * same answer share one call.
 */
import type { Bus } from "../lib/bus.ts";
import { Cache } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import { DEFAULT_RESPONSE_CACHE_BYTES } from "../lib/config.ts";
import type { Precompressed } from "./precompressed.ts";

export interface CachedAnswer {
  /**
   * The body with its ETag and its encodings, each made on the first read
   * that asks for it (precompressed.ts); kept as text when it is UTF-8
   * (cheaper for Deno to send), else as bytes.
   */
  body: Precompressed;
  /** Clock time (ms) until which the answer is right. */
  freshUntil: number;
  /** Space-separated cache tags (Surrogate-Key, Cache-Tag); empty for none. */
  tags?: string;
}

const MAX_ANSWERS = 20_000;
/**
 * Bookkeeping per kept answer beyond its body, key and ETag: the objects, the
 * map slot and the header records content_api.ts prepares for it; an estimate.
 */
const ENTRY_OVERHEAD = 1024;

/**
 * What one kept answer costs in memory, as the byte budget counts it: its body
 * once (kept as text when it is UTF-8, one byte a character for ASCII JSON and
 * two at most, else as bytes), key and ETag (JavaScript strings, two bytes a
 * character at most), and for a body that may be compressed room for its
 * encodings, counted when the answer is kept since they are made later:
 * half the body's bytes, far above what JSON compresses to (a fifth or less on our answers).
 */
export function answerBytes(key: string, answer: CachedAnswer | undefined): number {
  if (!answer) return ENTRY_OVERHEAD + key.length * 2;
  const kept = answer.body;
  const body = typeof kept.body === "string" ? kept.body.length * 2 : kept.byteLength;
  const encodings = kept.compressible ? Math.ceil(kept.byteLength / 2) : 0;
  const tags = (answer.tags?.length ?? 0) * 2;
  return ENTRY_OVERHEAD + key.length * 2 + body + encodings + kept.etag.length * 2 + tags;
}

/** Query strings remembered in their normal form; a flood of new ones only empties the memo. */
const MAX_QUERIES = 10_000;
const queries = new Map<string, string>();

/**
 * The query without the key parameter, sorted by name, as URLSearchParams
 * writes it. Remembered by the raw query string: clients repeat the same few
 * queries, and parsing, sorting and writing them again was work on every read.
 */
function normalQuery(search: string): string {
  let normal = queries.get(search);
  if (normal === undefined) {
    const params = [...new URLSearchParams(search)].filter(([name]) => name !== "key");
    params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    normal = new URLSearchParams(params).toString();
    if (queries.size >= MAX_QUERIES) queries.clear();
    queries.set(search, normal);
  }
  return normal;
}

export class ResponseCache {
  #answers: Cache<CachedAnswer>;

  /** maxBytes bounds the bodies kept, so a few large answers cannot grow memory without end. */
  constructor(bus: Bus, clock: Clock, maxBytes: number = DEFAULT_RESPONSE_CACHE_BYTES) {
    // Every answer carries its own deadline; errors are never kept.
    this.#answers = new Cache<CachedAnswer>({
      name: "gateway.responses",
      maxEntries: MAX_ANSWERS,
      maxBytes,
      sizeOf: answerBytes,
      clock,
      ttlMs: 0,
    });
    this.#answers.invalidateOn(
      bus,
      "content-changed",
      (siteId) => (key) => key.startsWith(`${siteId}\n`),
    );
  }

  close(): void {
    this.#answers.close();
  }

  /** Bytes held, as answerBytes counts them. */
  get bytes(): number {
    return this.#answers.bytes;
  }

  /** Answers held. */
  get size(): number {
    return this.#answers.size;
  }

  /** Cache key: site, path and the query without the key parameter, sorted by name. */
  static keyOf(siteId: string, url: URL): string {
    if (url.search === "") return `${siteId}\n${url.pathname}\n`;
    return `${siteId}\n${url.pathname}\n${normalQuery(url.search)}`;
  }

  /** The kept answer for key, or the one fetch gives (kept until its freshUntil). */
  async get(key: string, fetch: () => Promise<CachedAnswer>): Promise<CachedAnswer> {
    const answer = await this.#answers.get(key, async () => {
      const fresh = await fetch();
      return { value: fresh, until: fresh.freshUntil };
    });
    return answer!;
  }
}
