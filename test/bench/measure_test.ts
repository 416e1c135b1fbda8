import { describe, expect, it } from "vitest";
import { statTicks, threadShares } from "./measure.ts";

/** A /proc stat line: pid, (name), state, then fields 4 to 13, utime, stime, and more. */
const statLine = (name: string, utime: number, stime: number) =>
  `4242 (${name}) S ${Array(10).fill("0").join(" ")} ${utime} ${stime} 0 0 20 0 7`;

describe("statTicks", () => {
  it("reads the name and user plus system ticks, a name with spaces and parentheses too", () => {
    expect(statTicks(statLine("deno", 120, 30))).toEqual({ name: "deno", ticks: 150 });
    expect(statTicks(statLine("V8 DefaultWorke", 7, 1))).toEqual({
      name: "V8 DefaultWorke",
      ticks: 8,
    });
    expect(statTicks(statLine("a) (b", 5, 5))).toEqual({ name: "a) (b", ticks: 10 });
  });
});

describe("threadShares", () => {
  it("gives each thread's share of a core, busiest first, without the idle ones", () => {
    const before = new Map([
      ["1", { name: "deno", ticks: 1000 }],
      ["2", { name: "worker-1", ticks: 200 }],
      ["3", { name: "tokio", ticks: 50 }],
    ]);
    const after = new Map([
      ["1", { name: "deno", ticks: 1540 }],
      ["2", { name: "worker-1", ticks: 450 }],
      ["3", { name: "tokio", ticks: 51 }],
      // Started between the readings: counted from zero.
      ["4", { name: "worker-2", ticks: 300 }],
    ]);
    expect(threadShares(before, after, 10)).toBe("deno 54%, worker-2 30%, worker-1 25%");
  });
});
