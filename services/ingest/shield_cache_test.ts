import { describe, expect, it } from "vitest";
import { createLocalBus } from "../lib/bus.ts";
import { ManualClock } from "../lib/clock.ts";
import type { ShieldsDef } from "../lib/shields.ts";
import { ShieldCache, SHIELDS_TTL_MS } from "./shield_cache.ts";

const OFFICE = "203.0.113.7";
const input = { clientIp: OFFICE, country: () => null, path: "/", referrerHost: undefined };
const none: ShieldsDef = { ips: [], countries: [], pages: [] };
const office: ShieldsDef = { ips: [OFFICE], countries: [], pages: [] };

/** A store whose loads answer only when the test says so. */
function heldStore() {
  const loads: { resolve: (def: ShieldsDef) => void }[] = [];
  const load = () => new Promise<ShieldsDef>((resolve) => loads.push({ resolve }));
  return { loads, load };
}

const settled = async <T>(promise: Promise<T>): Promise<T | "pending"> =>
  await Promise.race([promise, new Promise<"pending">((r) => setTimeout(() => r("pending"), 20))]);

describe("ShieldCache", () => {
  it("waits for a site's first load, then serves its last shields while a later load is held", async () => {
    const clock = new ManualClock(0);
    const bus = createLocalBus();
    const store = heldStore();
    const cache = new ShieldCache(store.load, { bus, clock, referrerBlocklist: [] });
    try {
      const first = cache.get("s");
      expect(await settled(first)).toBe("pending");
      store.loads[0].resolve(none);
      expect((await first).reason(input)).toBeUndefined();

      clock.advance(SHIELDS_TTL_MS + 1);
      // The database is held (a lock): the event is answered from the last shields.
      const stale = await settled(cache.get("s"));
      expect(stale).not.toBe("pending");
      expect(store.loads).toHaveLength(2);
      store.loads[1].resolve(office);
      await new Promise((r) => setTimeout(r, 0));
      // The background load's shields serve from then on.
      expect((await cache.get("s")).reason(input)).toBe("ip");
    } finally {
      cache.close();
    }
  });

  it("waits again after an import changed the site: its old shields are not served", async () => {
    const clock = new ManualClock(0);
    const bus = createLocalBus();
    const store = heldStore();
    const cache = new ShieldCache(store.load, { bus, clock, referrerBlocklist: [] });
    try {
      const first = cache.get("s");
      store.loads[0].resolve(none);
      await first;
      await bus.publish("event-types-changed", "s");
      const next = cache.get("s");
      expect(await settled(next)).toBe("pending");
      store.loads[1].resolve(office);
      expect((await next).reason(input)).toBe("ip");
    } finally {
      cache.close();
    }
  });
});
