/**
 * The declared event types of each site, cached for the hot path. An import
 * through this replica drops the site's entry at once; other replicas see a
 * change within TTL_MS.
 */
import type { EventTypeDef } from "../lib/manifest/types.ts";
import { TtlCache } from "../lib/ttl_cache.ts";

export const EVENT_TYPES_TTL_MS = 5_000;

export type TypesOfSite = ReadonlyMap<string, EventTypeDef>;

export class EventTypeCache {
  #cache = new TtlCache<string, TypesOfSite>({ maxEntries: 10_000 });
  #pending = new Map<string, Promise<TypesOfSite>>();

  constructor(
    private readonly load: (siteId: string) => Promise<EventTypeDef[]>,
    private readonly ttlMs = EVENT_TYPES_TTL_MS,
  ) {}

  get(siteId: string): Promise<TypesOfSite> {
    const cached = this.#cache.get(siteId);
    if (cached) return Promise.resolve(cached);
    const pending = this.#pending.get(siteId);
    if (pending) return pending;
    const lookup = this.load(siteId).then((types) => {
      const map = new Map(types.map((t) => [t.name, t]));
      this.#cache.set(siteId, map, Date.now() + this.ttlMs);
      return map as TypesOfSite;
    }).finally(() => this.#pending.delete(siteId));
    this.#pending.set(siteId, lookup);
    return lookup;
  }

  invalidate(siteId: string): void {
    this.#cache.delete(siteId);
  }
}
