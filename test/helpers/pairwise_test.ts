import { describe, expect, it } from "vitest";
import { allPairs } from "./pairwise.ts";

const FACTORS = {
  storage: ["pglite", "postgres"],
  zone: ["UTC", "Asia/Kathmandu", "America/New_York", "Australia/Sydney"],
  range: ["month", "short"],
  rollups: ["without", "with"],
  query: Array.from({ length: 33 }, (_, i) => i),
} as const;

const utcShort = (row: { zone?: string; range?: string }) =>
  !(row.zone === "UTC" && row.range === "short");

describe("all-pairs combinations", () => {
  const rows = allPairs(FACTORS, utcShort);

  it("meets every value of each factor with every value of each other, where allowed", () => {
    const keys = Object.keys(FACTORS) as (keyof typeof FACTORS)[];
    const missing: string[] = [];
    for (const [i, a] of keys.entries()) {
      for (const b of keys.slice(i + 1)) {
        for (const x of FACTORS[a]) {
          for (const y of FACTORS[b]) {
            if (!utcShort({ [a]: x, [b]: y })) continue;
            if (!rows.some((row) => row[a] === x && row[b] === y)) {
              missing.push(`${a}=${x} ${b}=${y}`);
            }
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("never makes a combination refused, in far fewer rows than the cross product", () => {
    expect(rows.filter((row) => !utcShort(row))).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(4 * 33);
    expect(rows.length).toBeLessThan((2 * 4 * 2 * 2 * 33) / 3);
  });

  it("makes the same rows every time", () => {
    expect(allPairs(FACTORS, utcShort)).toEqual(rows);
  });
});
