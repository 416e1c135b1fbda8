import { describe, expect, it } from "vitest";
import { createLocalBus } from "../lib/bus.ts";
import { ManualClock } from "../lib/clock.ts";
import { answerBytes, type CachedAnswer, ResponseCache } from "./response_cache.ts";
import { Precompressed } from "./precompressed.ts";

const clock = new ManualClock();

const answer = (body: string | Uint8Array = "{}"): CachedAnswer => ({
  body: new Precompressed(body, { etag: '"x"', compressFrom: 1024 }),
  freshUntil: clock.now() + 60_000,
});

/** The answer the cache kept for key, or undefined when it had to fetch one. */
async function kept(cache: ResponseCache, key: string): Promise<CachedAnswer | undefined> {
  let fetched = false;
  const got = await cache.get(key, () => {
    fetched = true;
    return Promise.resolve(answer());
  });
  return fetched ? undefined : got;
}

describe("ResponseCache", () => {
  it("keys by site, path and query without the key parameter, in any order", () => {
    const a = ResponseCache.keyOf("s", new URL("http://h/p?lang=de&key=pk_1&empty=0"));
    const b = ResponseCache.keyOf("s", new URL("http://h/p?empty=0&lang=de"));
    expect(a).toBe(b);
    expect(ResponseCache.keyOf("t", new URL("http://h/p?empty=0&lang=de"))).not.toBe(a);
    expect(ResponseCache.keyOf("s", new URL("http://h/p"))).not.toBe(a);
  });

  it("gives a repeated query the same key, keeps the order of repeated names", () => {
    const url = "http://h/p?lang=fr&lang=de&key=pk_1";
    const first = ResponseCache.keyOf("s", new URL(url));
    expect(first).toBe("s\n/p\nlang=fr&lang=de");
    expect(ResponseCache.keyOf("s", new URL(url))).toBe(first);
    expect(ResponseCache.keyOf("s", new URL("http://h/p?lang=de&lang=fr"))).toBe(
      "s\n/p\nlang=de&lang=fr",
    );
    expect(ResponseCache.keyOf("s", new URL("http://h/q?lang=fr&lang=de"))).toBe(
      "s\n/q\nlang=fr&lang=de",
    );
  });

  it("drops a site's answers when its content changes, and only that site's", async () => {
    const bus = createLocalBus();
    const cache = new ResponseCache(bus, clock);
    const a1 = ResponseCache.keyOf("a", new URL("http://h/1"));
    const b1 = ResponseCache.keyOf("b", new URL("http://h/1"));
    await cache.get(a1, () => Promise.resolve(answer()));
    await cache.get(b1, () => Promise.resolve(answer()));
    await bus.publish("content-changed", "a");
    expect(await kept(cache, a1)).toBeUndefined();
    expect(await kept(cache, b1)).toBeDefined();
  });

  it("does not keep an answer fetched while an import landed", async () => {
    const bus = createLocalBus();
    const cache = new ResponseCache(bus, clock);
    const a1 = ResponseCache.keyOf("a", new URL("http://h/1"));
    let arrive = (_: CachedAnswer) => {};
    const inFlight = cache.get(a1, () => new Promise((resolve) => arrive = resolve));
    await bus.publish("content-changed", "a"); // arrives while the fetch is in flight
    arrive(answer());
    await inFlight;
    expect(await kept(cache, a1)).toBeUndefined();
    expect(await kept(cache, a1)).toBeDefined();
  });

  it("keeps an answer until content-service said it stops being right", async () => {
    const cache = new ResponseCache(createLocalBus(), clock);
    await cache.get("k", () => Promise.resolve(answer()));
    clock.advance(59_999);
    expect(await kept(cache, "k")).toBeDefined();
    clock.advance(1);
    expect(await kept(cache, "k")).toBeUndefined();
  });

  it("keeps answers within its byte budget, dropping the least recently used", async () => {
    const big = (): CachedAnswer => answer(new Uint8Array(1000));
    const budget = 3 * answerBytes("k0", big()) + 10;
    const cache = new ResponseCache(createLocalBus(), clock, budget);
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, () => Promise.resolve(big()));
    expect(cache.size).toBe(3);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    expect(await kept(cache, "k9")).toBeDefined();
    expect(await kept(cache, "k0")).toBeUndefined();
  });
});
