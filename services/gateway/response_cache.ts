/**
 * Rendered content answers kept by the gateway, so a hot read costs neither a
 * call to content-service nor storage. Entries expire when content-service
 * said the answer stops being right (a scheduled post publishing), and an
 * import drops every entry of its site at once through the bus.
 */
import type { Bus } from "../lib/bus.ts";
import { TtlCache } from "../lib/ttl_cache.ts";

export interface CachedAnswer {
  siteId: string;
  body: Uint8Array;
  etag: string;
  freshUntil: number;
}

export class ResponseCache {
  #cache = new TtlCache<string, CachedAnswer>({ maxEntries: 20_000 });
  #generation = 0;

  constructor(bus: Bus) {
    bus.subscribe("content-changed", (siteId) => {
      this.#generation++;
      this.#cache.deleteWhere((_key, answer) => answer.siteId === siteId);
    });
  }

  /**
   * Counts invalidations. An answer fetched while an import landed may hold
   * the old content, so it is stored only when no invalidation came between
   * the start of its fetch and its arrival (see `set`).
   */
  get generation(): number {
    return this.#generation;
  }

  /** Cache key: site, path and the query without the key parameter, sorted by name. */
  static keyOf(siteId: string, url: URL): string {
    if (url.search === "") return `${siteId}\n${url.pathname}\n`;
    const params = [...url.searchParams].filter(([name]) => name !== "key");
    params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `${siteId}\n${url.pathname}\n${new URLSearchParams(params)}`;
  }

  get(key: string): CachedAnswer | undefined {
    return this.#cache.get(key);
  }

  /** Stores the answer unless content changed since `generation` was read. */
  set(key: string, answer: CachedAnswer, generation: number): void {
    if (generation !== this.#generation) return;
    this.#cache.set(key, answer, answer.freshUntil);
  }
}
