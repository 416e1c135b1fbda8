import { describe, expect, it } from "vitest";
import { createLocalBus } from "./bus.ts";
import { Cache, type Loaded } from "./cache.ts";
import { ManualClock } from "./clock.ts";

/** A load that counts its calls and answers what `answer` holds when it is run. */
function counting<V>(answer: () => Loaded<V>) {
  const load = () => {
    load.calls++;
    return Promise.resolve(answer());
  };
  load.calls = 0;
  return load;
}

/** A load that waits until released. */
function held<V>() {
  let release = (_: Loaded<V>) => {};
  let fail = (_: Error) => {};
  const load = () => {
    load.calls++;
    return new Promise<Loaded<V>>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
  };
  load.calls = 0;
  return { load, release: (v: Loaded<V>) => release(v), fail: (e: Error) => fail(e) };
}

describe("Cache", () => {
  it("loads once for concurrent misses of one key (single flight)", async () => {
    const cache = new Cache<string>({ maxEntries: 10, clock: new ManualClock(), ttlMs: 1000 });
    const { load, release } = held<string>();
    const answers = Promise.all([cache.get("k", load), cache.get("k", load), cache.get("k", load)]);
    release({ value: "v" });
    expect(await answers).toEqual(["v", "v", "v"]);
    expect(load.calls).toBe(1);
    expect(await cache.get("k", load)).toBe("v");
    expect(load.calls).toBe(1);
  });

  it("expires an entry by the clock: its TTL, or the deadline its load gave", async () => {
    const clock = new ManualClock(1_000_000);
    const cache = new Cache<string>({ maxEntries: 10, clock, ttlMs: 1000 });
    const byTtl = counting(() => ({ value: "a" }));
    const byDeadline = counting(() => ({ value: "b", until: clock.now() + 5000 }));
    await cache.get("ttl", byTtl);
    await cache.get("deadline", byDeadline);
    clock.advance(999);
    await cache.get("ttl", byTtl);
    expect(byTtl.calls).toBe(1);
    clock.advance(1);
    await cache.get("ttl", byTtl);
    expect(byTtl.calls).toBe(2);
    clock.advance(3999);
    await cache.get("deadline", byDeadline);
    expect(byDeadline.calls).toBe(1);
    clock.advance(1);
    await cache.get("deadline", byDeadline);
    expect(byDeadline.calls).toBe(2);
  });

  it("keeps nothing whose deadline has passed already", async () => {
    const clock = new ManualClock();
    const cache = new Cache<string>({ maxEntries: 10, clock, ttlMs: 1000 });
    const load = counting(() => ({ value: "v", until: clock.now() }));
    await cache.get("k", load);
    await cache.get("k", load);
    expect(load.calls).toBe(2);
    expect(cache.size).toBe(0);
  });

  it("keeps a negative answer for missTtlMs", async () => {
    const clock = new ManualClock();
    const cache = new Cache<string>({ maxEntries: 10, clock, ttlMs: 60_000, missTtlMs: 5000 });
    const load = counting<string>(() => ({ value: undefined }));
    expect(await cache.get("unknown", load)).toBeUndefined();
    clock.advance(4999);
    expect(await cache.get("unknown", load)).toBeUndefined();
    expect(load.calls).toBe(1);
    clock.advance(1);
    await cache.get("unknown", load);
    expect(load.calls).toBe(2);
  });

  it("keeps no negative answer when missTtlMs is 0", async () => {
    const cache = new Cache<string>({
      maxEntries: 10,
      clock: new ManualClock(),
      ttlMs: 60_000,
      missTtlMs: 0,
    });
    const load = counting<string>(() => ({ value: undefined }));
    await cache.get("unknown", load);
    await cache.get("unknown", load);
    expect(load.calls).toBe(2);
  });

  it("does not keep a failed load, and shares the failure with those waiting", async () => {
    const cache = new Cache<string>({ maxEntries: 10, clock: new ManualClock(), ttlMs: 1000 });
    const { load, fail } = held<string>();
    const first = cache.get("k", load);
    const second = cache.get("k", load);
    fail(new Error("outage"));
    await expect(first).rejects.toThrow("outage");
    await expect(second).rejects.toThrow("outage");
    expect(await cache.get("k", counting(() => ({ value: "v" })))).toBe("v");
    expect(load.calls).toBe(1);
  });

  it("with staleWhileLoading, answers an expired value while it loads again; a failed load keeps it", async () => {
    const clock = new ManualClock(0);
    const cache = new Cache<string>({
      maxEntries: 10,
      clock,
      ttlMs: 1000,
      staleWhileLoading: true,
    });
    await cache.get("k", counting(() => ({ value: "old" })));
    clock.advance(1001);
    const { load, release, fail } = held<string>();
    // The load is held (a lock, an outage): the lookup does not wait for it.
    expect(await cache.get("k", load)).toBe("old");
    expect(await cache.get("k", load)).toBe("old");
    expect(load.calls).toBe(1);
    fail(new Error("outage"));
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get("k", load)).toBe("old");
    expect(load.calls).toBe(2);
    release({ value: "new" });
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get("k", load)).toBe("new");
  });

  it("with staleWhileLoading, waits for the load after the key was deleted", async () => {
    const cache = new Cache<string>({
      maxEntries: 10,
      clock: new ManualClock(0),
      ttlMs: 1000,
      staleWhileLoading: true,
    });
    await cache.get("k", counting(() => ({ value: "old" })));
    cache.delete("k");
    const { load, release } = held<string>();
    const next = cache.get("k", load);
    release({ value: "new" });
    expect(await next).toBe("new");
  });

  it("holds at most maxEntries, dropping the least recently used", async () => {
    const cache = new Cache<string>({ maxEntries: 2, clock: new ManualClock(), ttlMs: 1000 });
    const load = counting(() => ({ value: "v" }));
    await cache.get("a", load);
    await cache.get("b", load);
    await cache.get("a", load); // a is now the most recently used
    await cache.get("c", load); // b goes
    expect(cache.size).toBe(2);
    expect(load.calls).toBe(3);
    await cache.get("a", load);
    expect(load.calls).toBe(3);
    await cache.get("b", load);
    expect(load.calls).toBe(4);
  });

  it("keeps the order of use when the same key is read again and again, or forgotten", async () => {
    const cache = new Cache<string>({ maxEntries: 2, clock: new ManualClock(), ttlMs: 1000 });
    const loads: string[] = [];
    const load = (key: string) => () => {
      loads.push(key);
      return Promise.resolve({ value: key });
    };
    await cache.get("a", load("a"));
    await cache.get("b", load("b"));
    await cache.get("b", load("b"));
    await cache.get("b", load("b"));
    await cache.get("a", load("a")); // a is the most recently used, b the least
    await cache.get("c", load("c")); // b goes
    expect(loads).toEqual(["a", "b", "c"]);
    await cache.get("a", load("a")); // a again, after c was stored: c is now the least
    await cache.get("d", load("d")); // c goes
    await cache.get("a", load("a"));
    expect(loads).toEqual(["a", "b", "c", "d"]);
    cache.delete("d");
    await cache.get("d", load("d")); // stored again: the most recently used
    await cache.get("d", load("d"));
    await cache.get("e", load("e")); // a goes
    await cache.get("d", load("d"));
    expect(loads).toEqual(["a", "b", "c", "d", "d", "e"]);
    await cache.get("a", load("a"));
    expect(loads).toEqual(["a", "b", "c", "d", "d", "e", "a"]);
  });

  it("holds at most maxBytes as sizeOf counts them, dropping the least recently used", async () => {
    const cache = new Cache<string>({
      maxEntries: 100,
      maxBytes: 10,
      sizeOf: (_key, value) => value?.length ?? 0,
      clock: new ManualClock(),
      ttlMs: 1000,
    });
    const loads: string[] = [];
    const load = (value: string) => () => {
      loads.push(value);
      return Promise.resolve({ value });
    };
    await cache.get("a", load("aaaa"));
    await cache.get("b", load("bbbb"));
    expect(cache.bytes).toBe(8);
    await cache.get("a", load("aaaa")); // a is now the most recently used
    await cache.get("c", load("cccc")); // 12 bytes: b goes
    expect(cache.bytes).toBe(8);
    expect(cache.size).toBe(2);
    await cache.get("a", load("aaaa"));
    await cache.get("c", load("cccc"));
    expect(loads).toEqual(["aaaa", "bbbb", "cccc"]);
    await cache.get("b", load("bbbb"));
    expect(loads).toEqual(["aaaa", "bbbb", "cccc", "bbbb"]);
    // A value larger than the whole budget is answered but not kept, and evicts nothing.
    expect(await cache.get("huge", load("x".repeat(11)))).toBe("x".repeat(11));
    expect(cache.bytes).toBe(8);
    await cache.get("huge", load("x".repeat(11)));
    expect(loads.filter((v) => v.length === 11)).toHaveLength(2);
    // Forgetting an entry gives its bytes back.
    cache.delete("b");
    expect(cache.bytes).toBe(4);
    cache.clear();
    expect(cache.bytes).toBe(0);
  });

  it("drops what a bus message names, and a load under way is not kept", async () => {
    const bus = createLocalBus();
    const cache = new Cache<string>({ maxEntries: 10, clock: new ManualClock(), ttlMs: 60_000 });
    cache.invalidateOn(bus, "content-changed", (site) => (key) => key.startsWith(`${site}/`));
    cache.invalidateOn(bus, "key-changed", (hash) => `key:${hash}`);
    const load = counting(() => ({ value: "v" }));
    await cache.get("a/1", load);
    await cache.get("a/2", load);
    await cache.get("b/1", load);
    await cache.get("key:h", load);
    expect(load.calls).toBe(4);

    await bus.publish("content-changed", "a");
    await bus.publish("key-changed", "h");
    await cache.get("a/1", load);
    await cache.get("a/2", load);
    await cache.get("b/1", load);
    await cache.get("key:h", load);
    expect(load.calls).toBe(7);

    const { load: slow, release } = held<string>();
    const inFlight = cache.get("a/3", slow);
    await bus.publish("content-changed", "a");
    // A request after the message does not wait for the old load.
    const after = cache.get("a/3", counting(() => ({ value: "new" })));
    release({ value: "old" });
    expect(await inFlight).toBe("old");
    expect(await after).toBe("new");
    expect(await cache.get("a/3", load)).toBe("new");
  });

  it("stops listening when closed", async () => {
    const bus = createLocalBus();
    const cache = new Cache<string>({ maxEntries: 10, clock: new ManualClock(), ttlMs: 60_000 });
    cache.invalidateOn(bus, "key-changed", (hash) => hash);
    const load = counting(() => ({ value: "v" }));
    cache.close();
    await cache.get("h", load);
    await bus.publish("key-changed", "h");
    await cache.get("h", load);
    expect(load.calls).toBe(1);
  });
});
