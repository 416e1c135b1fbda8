import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group_commit.ts";
import { storageUnavailable } from "../lib/db/mod.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("GroupCommit", () => {
  it("writes a lone submission at once and answers it", async () => {
    const writes: number[][] = [];
    const gc = new GroupCommit((items: number[]) => {
      writes.push(items);
      return Promise.resolve(items.map((n) => n + 1));
    }, { maxConcurrent: 1, maxItems: 100 });
    expect(await gc.submit([1, 2])).toEqual([2, 3]);
    expect(writes).toEqual([[1, 2]]);
  });

  it("merges submissions that wait for a running write into one write", async () => {
    const writes: number[][] = [];
    const gc = new GroupCommit(async (items: number[]) => {
      writes.push(items);
      await delay(20);
      return items.map((n) => n * 2);
    }, { maxConcurrent: 1, maxItems: 100 });
    const first = gc.submit([1]);
    const rest = [gc.submit([2, 3]), gc.submit([4]), gc.submit([5])];
    expect(await first).toEqual([2]);
    expect(await Promise.all(rest)).toEqual([[4, 6], [8], [10]]);
    expect(writes).toEqual([[1], [2, 3, 4, 5]]);
  });

  it("keeps a write under maxItems and runs up to maxConcurrent writes at once", async () => {
    let running = 0;
    let most = 0;
    const sizes: number[] = [];
    const gc = new GroupCommit(async (items: number[]) => {
      running++;
      most = Math.max(most, running);
      sizes.push(items.length);
      await delay(10);
      running--;
      return items;
    }, { maxConcurrent: 2, maxItems: 3 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => gc.submit([i, i])));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(most).toBe(2);
  });

  it("retries a failed merged write submission by submission, failing only the bad one", async () => {
    const gc = new GroupCommit(async (items: number[]) => {
      await delay(5);
      if (items.includes(-1)) throw new Error("bad row");
      return items;
    }, { maxConcurrent: 1, maxItems: 100 });
    const first = gc.submit([0]);
    const good = gc.submit([1]);
    const bad = gc.submit([-1]);
    const alsoGood = gc.submit([2]);
    expect(await first).toEqual([0]);
    expect(await good).toEqual([1]);
    await expect(bad).rejects.toThrow("bad row");
    expect(await alsoGood).toEqual([2]);
    await gc.drained();
  });

  it("fails a write that never settles at its deadline, as storage unavailable, and frees the slot", async () => {
    let calls = 0;
    const gc = new GroupCommit((items: number[]) => {
      calls++;
      // The first write hangs like a query on a connection lost mid-transaction.
      return calls === 1 ? new Promise<number[]>(() => {}) : Promise.resolve(items);
    }, { maxConcurrent: 1, maxItems: 1, timeoutMs: 50 });
    const stuck = gc.submit([1]);
    const error = await stuck.catch((e) => e);
    expect(storageUnavailable(error)).toBe(true);
    expect(String(error)).toContain("within 50 ms");
    expect(await gc.submit([3])).toEqual([3]);
  });
});
