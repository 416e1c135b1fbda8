import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeSet, encodeSet, VisitorUnion } from "./visitor_sets.ts";

describe("visitor sets", () => {
  it("encode any integers within ±2^53 and decode them sorted and unique", () => {
    fc.assert(
      fc.property(fc.array(fc.maxSafeInteger().map((n) => n % 2 ** 40)), (numbers) => {
        const sorted = [...new Set(numbers)].sort((a, b) => a - b);
        expect(decodeSet(encodeSet(numbers))).toEqual(sorted);
      }),
    );
    expect(decodeSet(encodeSet([-5, 3, 3, 2 ** 52]))).toEqual([-5, 3, 2 ** 52]);
    expect(encodeSet([1, 2, 3]).length).toBe(3); // a byte a visitor when they are close
  });

  it("count the union of sets, numbers and visitors without a number", () => {
    const union = new VisitorUnion();
    union.addSet(encodeSet([1, 2, 3]), 3);
    expect(union.size).toBe(3); // one stored set: its stored size
    union.addSet(encodeSet([3, 4]), 2);
    union.addNumbers([4, 5]);
    union.addKey("s-anonymous");
    union.addKey("s-anonymous");
    expect(union.size).toBe(6);
    const wide = new VisitorUnion();
    wide.addNumbers([0, 2 ** 40]);
    wide.addNumbers([2 ** 40, 7]);
    expect(wide.size).toBe(3); // beyond a bitmap's span, sorted instead
  });

  it("take visitors out and put back only those said to belong", () => {
    const union = new VisitorUnion();
    union.addSet(encodeSet([1, 2, 3]), 3);
    union.addKey("k");
    union.exclude([2, 3, 9], ["k"]);
    union.include(3, "v3");
    union.include(9, "v9");
    union.include(null, "k");
    expect(union.size).toBe(4); // 1, 3, 9 and k
    const all = new VisitorUnion();
    all.addUnion(union);
    all.addNumbers([2]);
    expect(all.size).toBe(4); // 2 stays out: its membership is what include says
  });
});
