/**
 * Each site's content, loaded whole from storage once and kept in memory, so
 * reads after the first never touch Postgres. An import drops the copy here
 * at once and in every other replica through the bus; the TTL bounds how
 * stale a replica that missed the message can be.
 */
import { TtlCache } from "../lib/ttl_cache.ts";
import type { SiteContent } from "./model.ts";
import type { ContentStore } from "./storage.ts";

export class SiteContentCache {
  #cache = new TtlCache<string, Promise<SiteContent | undefined>>({ maxEntries: 1000 });

  constructor(private readonly store: ContentStore, private readonly ttlMs: number) {}

  get(siteId: string): Promise<SiteContent | undefined> {
    const cached = this.#cache.get(siteId);
    if (cached) return cached;
    const loading = this.store.load(siteId);
    this.#cache.set(siteId, loading, Date.now() + this.ttlMs);
    loading.catch(() => this.#cache.delete(siteId));
    return loading;
  }

  forget(siteId: string): void {
    this.#cache.delete(siteId);
  }
}
