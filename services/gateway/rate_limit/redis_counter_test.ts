import { describe, expect, it } from "vitest";
import type { Redis } from "../../lib/redis.ts";
import { LocalCounter } from "./counter.ts";
import { RedisCounter } from "./redis_counter.ts";

/** The counting script's semantics over a Map, recording every call it gets. */
function fakeRedis() {
  const store = new Map<string, number>();
  const calls: { keys: string[]; increments: number[] }[] = [];
  const redis = {
    defineCommand() {},
    crmRateHit(numKeys: number, ...args: (string | number)[]) {
      const keys = args.slice(0, numKeys) as string[];
      const increments = args.slice(numKeys, 2 * numKeys).map(Number);
      calls.push({ keys, increments });
      return Promise.resolve(keys.map((key, i) => {
        const value = (store.get(key) ?? 0) + increments[i];
        if (increments[i] > 0) store.set(key, value);
        return value;
      }));
    },
  };
  return { redis: redis as unknown as Redis, calls, store };
}

const NOW = 1_700_000_000_000;

describe("RedisCounter", () => {
  it("counts the requests of one turn in one call, each counter once, with exact values", async () => {
    const { redis, calls } = fakeRedis();
    const counter = new RedisCounter(redis, "p:");
    const reference = new LocalCounter();
    const requests = [
      [{ name: "ip:a", by: 1 }, { name: "bad:a", by: 0 }, { name: "key:k", by: 1 }],
      [{ name: "ip:b", by: 1 }, { name: "bad:b", by: 1 }],
      [{ name: "ip:a", by: 1 }, { name: "bad:a", by: 1 }, { name: "key:k", by: 1 }],
      [{ name: "ip:a", by: 1 }, { name: "bad:a", by: 0 }, { name: "key:k", by: 1 }],
      [{ name: "key:k", by: 0 }],
    ];
    const answers = await Promise.all(requests.map((hits) => counter.hit(hits, NOW)));
    // The same values as counting one request after another.
    expect(answers).toEqual(requests.map((hits) => reference.hitSync(hits, NOW)));
    expect(answers[3]).toEqual([3, 1, 3]);
    expect(calls).toHaveLength(1);
    const window = Math.floor(NOW / 60_000);
    expect(calls[0].keys).toEqual(
      ["ip:a", "bad:a", "key:k", "ip:b", "bad:b"].map((name) => `p:rl:${window}:${name}`),
    );
    expect(calls[0].increments).toEqual([3, 1, 3, 1, 1]);
  });

  it("carries on from what Redis holds: later calls add to earlier ones", async () => {
    const { redis, calls } = fakeRedis();
    const counter = new RedisCounter(redis, "p:");
    await counter.hit([{ name: "ip:a", by: 1 }], NOW);
    const [first, second] = await Promise.all([
      counter.hit([{ name: "ip:a", by: 1 }], NOW),
      counter.hit([{ name: "ip:a", by: 2 }], NOW),
    ]);
    expect(first).toEqual([2]);
    expect(second).toEqual([4]);
    expect(calls.map((c) => c.increments)).toEqual([[1], [3]]);
  });

  it("fails every request of a call that fails", async () => {
    const redis = {
      defineCommand() {},
      crmRateHit: () => Promise.reject(new Error("down")),
    } as unknown as Redis;
    const counter = new RedisCounter(redis, "p:");
    const results = await Promise.allSettled([
      counter.hit([{ name: "a", by: 1 }], NOW),
      counter.hit([{ name: "a", by: 1 }], NOW),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
