/**
 * The declared event types of each site, cached for the hot path. An import
 * drops the site's entry in every replica told through the bus (in the one
 * that applied it at once); EVENT_TYPES_TTL_MS bounds how long a replica that
 * missed the message (no Redis between replicas) keeps the old types.
 */
import type { Bus } from "../lib/bus.ts";
import { Cache } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";

export const EVENT_TYPES_TTL_MS = 5_000;
const MAX_SITES = 10_000;

export type TypesOfSite = ReadonlyMap<string, EventTypeDef>;

export class EventTypeCache {
  #sites: Cache<TypesOfSite>;

  constructor(
    private readonly load: (siteId: string) => Promise<EventTypeDef[]>,
    bus: Bus,
    clock: Clock,
  ) {
    this.#sites = new Cache<TypesOfSite>({
      name: "ingest.event_types",
      maxEntries: MAX_SITES,
      clock,
      ttlMs: EVENT_TYPES_TTL_MS,
    });
    this.#sites.invalidateOn(bus, "event-types-changed", (siteId) => siteId);
  }

  async get(siteId: string): Promise<TypesOfSite> {
    const types = await this.#sites.get(siteId, async () => {
      const list = await this.load(siteId);
      return { value: new Map(list.map((t) => [t.name, t])) };
    });
    return types!;
  }

  close(): void {
    this.#sites.close();
  }
}
