import { describe, expect, it } from "vitest";
import { Batcher, OverloadedError } from "./batcher.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder(ms = 0) {
  const calls: number[][] = [];
  const send = async (items: number[]) => {
    calls.push(items);
    if (ms) await delay(ms);
    return items.map((n) => n * 10);
  };
  return { calls, send };
}

describe("Batcher", () => {
  it("groups items added together into one call and answers each its own result", async () => {
    const { calls, send } = recorder();
    const b = new Batcher(send, { maxItems: 100, maxWaitMs: 5, maxInFlight: 1, maxQueued: 1000 });
    const results = await Promise.all([1, 2, 3].map((n) => b.add(n)));
    expect(results).toEqual([10, 20, 30]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it("sends a full batch at once, without waiting", async () => {
    const { calls, send } = recorder();
    const b = new Batcher(send, {
      maxItems: 2,
      maxWaitMs: 10_000,
      maxInFlight: 4,
      maxQueued: 1000,
    });
    const started = performance.now();
    await Promise.all([b.add(1), b.add(2)]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(calls).toEqual([[1, 2]]);
  });

  it("lets batches grow while the calls in flight are busy", async () => {
    const { calls, send } = recorder(30);
    const b = new Batcher(send, { maxItems: 1000, maxWaitMs: 0, maxInFlight: 1, maxQueued: 1000 });
    const first = b.add(0);
    await delay(5); // the first call is in flight now
    const rest = Array.from({ length: 50 }, (_, i) => b.add(i + 1));
    await Promise.all([first, ...rest]);
    expect(calls.length).toBe(2);
    expect(calls[1]).toHaveLength(50);
  });

  it("never exceeds maxItems or maxBytes in one call", async () => {
    const { calls, send } = recorder();
    const b = new Batcher(send, {
      maxItems: 4,
      maxWaitMs: 1,
      maxInFlight: 8,
      maxQueued: 1000,
      maxBytes: 25,
      sizeOf: () => 10,
    });
    await Promise.all(Array.from({ length: 9 }, (_, i) => b.add(i)));
    expect(Math.max(...calls.map((c) => c.length))).toBe(2);
    expect(calls.flat().sort((a, c) => a - c)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("rejects every item of a failed call, and refuses when too many wait", async () => {
    const b = new Batcher<number, number>(() => Promise.reject(new Error("down")), {
      maxItems: 10,
      maxWaitMs: 1,
      maxInFlight: 1,
      maxQueued: 2,
    });
    const a = b.add(1);
    const c = b.add(2);
    await expect(b.add(3)).rejects.toBeInstanceOf(OverloadedError);
    await expect(a).rejects.toThrow("down");
    await expect(c).rejects.toThrow("down");
  });

  it("close sends what waits and resolves when every call answered", async () => {
    const { calls, send } = recorder(10);
    const b = new Batcher(send, {
      maxItems: 10,
      maxWaitMs: 60_000,
      maxInFlight: 1,
      maxQueued: 100,
    });
    const pending = b.add(7);
    await b.close();
    expect(await pending).toBe(70);
    expect(calls).toEqual([[7]]);
  });
});
