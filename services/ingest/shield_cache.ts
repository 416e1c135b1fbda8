/**
 * Each site's shields, compiled with the installation's referrer block list
 * and cached for the hot path as the event types are (event_types.ts): an
 * import that changed the site drops its entry in every replica told through
 * the bus, and SHIELDS_TTL_MS bounds how long a replica that missed the
 * message keeps the old ones. Past SHIELDS_TTL_MS a site's last shields keep
 * serving while they load again (the cache's staleWhileLoading): only a
 * site's first event, and the first after an import changed it, waits for the
 * database, so a lock on ingest.sites (a migration, a long report) never holds
 * events.
 */
import type { Bus } from "../lib/bus.ts";
import { Cache } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import { compileShield, type Shield, type ShieldsDef } from "../lib/shields.ts";

export const SHIELDS_TTL_MS = 5_000;
const MAX_SITES = 10_000;

export class ShieldCache {
  #sites: Cache<Shield>;
  readonly #blocklist: ReadonlySet<string>;

  constructor(
    private readonly load: (siteId: string) => Promise<ShieldsDef>,
    options: { bus: Bus; clock: Clock; referrerBlocklist: readonly string[] },
  ) {
    this.#blocklist = new Set(options.referrerBlocklist);
    this.#sites = new Cache<Shield>({
      name: "ingest.shields",
      maxEntries: MAX_SITES,
      clock: options.clock,
      ttlMs: SHIELDS_TTL_MS,
      staleWhileLoading: true,
    });
    this.#sites.invalidateOn(options.bus, "event-types-changed", (siteId) => siteId);
  }

  async get(siteId: string): Promise<Shield> {
    const shield = await this.#sites.get(siteId, async () => ({
      value: compileShield(await this.load(siteId), this.#blocklist),
    }));
    return shield!;
  }

  close(): void {
    this.#sites.close();
  }
}
