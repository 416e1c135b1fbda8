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

  constructor(bus: Bus) {
    bus.subscribe("content-changed", (siteId) => {
      this.#cache.deleteWhere((_key, answer) => answer.siteId === siteId);
    });
  }

  /** Cache key: site, path and the query without the key parameter, sorted by name. */
  static keyOf(siteId: string, url: URL): string {
    const params = [...url.searchParams].filter(([name]) => name !== "key");
    params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `${siteId}\n${url.pathname}\n${new URLSearchParams(params)}`;
  }

  get(key: string): CachedAnswer | undefined {
    return this.#cache.get(key);
  }

  set(key: string, answer: CachedAnswer): void {
    this.#cache.set(key, answer, answer.freshUntil);
  }
}
