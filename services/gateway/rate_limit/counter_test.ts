import { describe, expect, it } from "vitest";
import { setImmediate } from "node:timers";
import { LocalCounter, WINDOW_MS } from "./counter.ts";

/** After the current turn's immediates (the counter's answers were queued first). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("LocalCounter", () => {
  it("counts each hit when asked, in order, and reads without counting", async () => {
    const counter = new LocalCounter();
    const now = 5 * WINDOW_MS + 10;
    const first = counter.hit([{ name: "a", by: 1 }, { name: "b", by: 2 }], now);
    const second = counter.hit([{ name: "a", by: 1 }, { name: "b", by: 0 }], now);
    expect(await first).toEqual([1, 2]);
    expect(await second).toEqual([2, 2]);
    // A new minute starts every counter again.
    expect(await counter.hit([{ name: "a", by: 1 }], now + WINDOW_MS)).toEqual([1]);
  });

  it("answers the hits of one turn together, in the next turn", async () => {
    const counter = new LocalCounter();
    const answered: number[] = [];
    for (let i = 0; i < 3; i++) {
      counter.hit([{ name: "k", by: 1 }], 0).then(([value]) => answered.push(value));
    }
    // Microtasks of this turn run first: nothing is answered yet.
    await Promise.resolve();
    await Promise.resolve();
    expect(answered).toEqual([]);
    await nextTurn();
    expect(answered).toEqual([1, 2, 3]);
    // The next turn's hits form a batch of their own.
    const later = counter.hit([{ name: "k", by: 1 }], 0);
    await nextTurn();
    expect(await later).toEqual([4]);
  });

  it("counts synchronously for the Redis counter's fallback", () => {
    const counter = new LocalCounter();
    expect(counter.hitSync([{ name: "x", by: 3 }], 0)).toEqual([3]);
    expect(counter.hitSync([{ name: "x", by: 0 }], 0)).toEqual([3]);
  });
});
