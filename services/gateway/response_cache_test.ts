import { describe, expect, it } from "vitest";
import { createLocalBus } from "../lib/bus.ts";
import { type CachedAnswer, ResponseCache } from "./response_cache.ts";

const answer = (siteId: string): CachedAnswer => ({
  siteId,
  body: new TextEncoder().encode("{}"),
  etag: '"x"',
  freshUntil: Date.now() + 60_000,
});

describe("ResponseCache", () => {
  it("keys by site, path and query without the key parameter, in any order", () => {
    const a = ResponseCache.keyOf("s", new URL("http://h/p?lang=de&key=pk_1&empty=0"));
    const b = ResponseCache.keyOf("s", new URL("http://h/p?empty=0&lang=de"));
    expect(a).toBe(b);
    expect(ResponseCache.keyOf("t", new URL("http://h/p?empty=0&lang=de"))).not.toBe(a);
    expect(ResponseCache.keyOf("s", new URL("http://h/p"))).not.toBe(a);
  });

  it("drops a site's answers when its content changes, and only that site's", async () => {
    const bus = createLocalBus();
    const cache = new ResponseCache(bus);
    cache.set("a1", answer("a"), cache.generation);
    cache.set("b1", answer("b"), cache.generation);
    await bus.publish("content-changed", "a");
    expect(cache.get("a1")).toBeUndefined();
    expect(cache.get("b1")).toBeDefined();
  });

  it("does not keep an answer fetched while an import landed", async () => {
    const bus = createLocalBus();
    const cache = new ResponseCache(bus);
    const before = cache.generation;
    await bus.publish("content-changed", "a"); // arrives while the fetch is in flight
    cache.set("a1", answer("a"), before);
    expect(cache.get("a1")).toBeUndefined();
    cache.set("a1", answer("a"), cache.generation);
    expect(cache.get("a1")).toBeDefined();
  });
});
