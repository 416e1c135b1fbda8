import { describe, expect, it } from "vitest";
import { boundedMemo } from "./memo.ts";

describe("boundedMemo", () => {
  it("computes each input once while it is remembered, null answers included", () => {
    const calls: string[] = [];
    const memo = boundedMemo((s: string) => {
      calls.push(s);
      return s === "none" ? null : s.length;
    }, { maxEntries: 10 });
    expect([memo("abc"), memo("abc"), memo("none"), memo("none")]).toEqual([3, 3, null, null]);
    expect(calls).toEqual(["abc", "none"]);
  });

  it("keeps at most maxEntries answers, forgetting the oldest first", () => {
    const calls: string[] = [];
    const memo = boundedMemo((s: string) => {
      calls.push(s);
      return s.toUpperCase();
    }, { maxEntries: 2 });
    memo("a");
    memo("b");
    memo("c"); // "a" goes
    memo("b");
    memo("a");
    expect(calls).toEqual(["a", "b", "c", "a"]);
  });

  it("does not remember inputs longer than maxInputLength", () => {
    let calls = 0;
    const memo = boundedMemo((s: string) => {
      calls++;
      return s.length;
    }, { maxEntries: 10, maxInputLength: 3 });
    memo("abcd");
    memo("abcd");
    memo("abc");
    memo("abc");
    expect(calls).toBe(3);
  });
});
