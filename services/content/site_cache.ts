/**
 * Each site's content, loaded whole from storage once and kept in memory, so
 * reads after the first never touch Postgres. An import drops the copy in
 * every replica through the bus (in this one at once); the TTL bounds how
 * stale a replica that missed the message can be. A site without content is
 * remembered as such too (a negative entry), for as long.
 */
import type { Bus } from "../lib/bus.ts";
import { Cache } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import type { SiteContent } from "./model.ts";
import type { ContentStore } from "./storage.ts";

/** Longest a replica that missed an invalidation message serves old content. */
export const SITE_CACHE_TTL_MS = 30_000;
const MAX_SITES = 1000;

export class SiteContentCache {
  #sites: Cache<SiteContent>;

  constructor(private readonly store: ContentStore, bus: Bus, clock: Clock) {
    this.#sites = new Cache<SiteContent>({
      name: "content.sites",
      maxEntries: MAX_SITES,
      clock,
      ttlMs: SITE_CACHE_TTL_MS,
    });
    this.#sites.invalidateOn(bus, "content-changed", (siteId) => siteId);
  }

  /** The site's content, or undefined when no manifest was imported for it. */
  get(siteId: string): Promise<SiteContent | undefined> {
    return this.#sites.get(siteId, async () => ({ value: await this.store.load(siteId) }));
  }

  close(): void {
    this.#sites.close();
  }
}
