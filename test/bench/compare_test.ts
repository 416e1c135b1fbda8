import { describe, expect, it } from "vitest";
import { type BenchFile, compare, formatComparison, numberOf, rowLabel } from "./compare.ts";

const file = (
  rows: Record<string, string | number | null>[],
  extra: BenchFile["reports"] = [],
) => ({
  reports: [{ name: "content", description: "", rows }, ...extra],
});

describe("bench compare", () => {
  it("reads numbers and percent texts as figures, nothing else", () => {
    expect(numberOf(12.5)).toBe(12.5);
    expect(numberOf("61%")).toBe(61);
    expect(numberOf("-3.5 %")).toBe(-3.5);
    expect(numberOf("system")).toBeUndefined();
    expect(numberOf(null)).toBeUndefined();
    expect(numberOf(Number.NaN)).toBeUndefined();
  });

  it("labels a row by its first text column", () => {
    expect(rowLabel({ "req/s": 10, target: "bare", "vs bare": "100%" })).toBe("bare");
    expect(rowLabel({ run: "first", path: "x" })).toBe("first");
  });

  it("gives the change of every figure present on both sides, matched by report and row", () => {
    const before = file([
      { target: "bare", "req/s": 20000, "p99 ms": 5, "vs bare": "100%" },
      { target: "system", "req/s": 8000, "p99 ms": 20, "vs bare": "40%", errors: 0 },
    ]);
    const after = file([
      { target: "system", "req/s": 12000, "p99 ms": 10, "vs bare": "60%", errors: 0 },
      { target: "bare", "req/s": 19000, "p99 ms": 5, "vs bare": "100%" },
    ]);
    const { changes, added, removed } = compare(before, after);
    const system = Object.fromEntries(
      changes.filter((c) => c.row === "system").map((c) => [c.figure, c]),
    );
    expect(system["req/s"]).toMatchObject({ old: 8000, new: 12000, changePct: 50 });
    expect(system["p99 ms"].changePct).toBe(-50);
    expect(system["vs bare"]).toMatchObject({ old: 40, new: 60, changePct: 50 });
    expect(system.errors).toMatchObject({ old: 0, new: 0, changePct: null });
    expect(changes.find((c) => c.row === "bare" && c.figure === "req/s")?.changePct).toBe(-5);
    expect(added).toEqual([]);
    expect(removed).toEqual([]);
  });

  it("lists rows and reports found on one side only", () => {
    const before = file([{ target: "a", x: 1 }, { target: "gone", x: 1 }]);
    const after = file([{ target: "a", x: 2 }, { target: "new", x: 1 }], [
      { name: "ingest", description: "", rows: [] },
    ]);
    const { changes, added, removed } = compare(before, after);
    expect(changes).toHaveLength(1);
    expect(added).toEqual(["content / new", "ingest"]);
    expect(removed).toEqual(["content / gone"]);
  });

  it("tells repeated labels apart by their order", () => {
    const before = file([{ target: "bare", x: 10 }, { target: "bare", x: 20 }]);
    const after = file([{ target: "bare", x: 11 }, { target: "bare", x: 30 }]);
    const rows = compare(before, after).changes.map((c) => [c.row, c.changePct]);
    expect(rows).toEqual([["bare", 10], ["bare #2", 50]]);
  });

  it("prints one line per figure under its report and row", () => {
    const lines = formatComparison(
      compare(
        file([{ target: "s", "req/s": 100, e: 0 }]),
        file([{ target: "s", "req/s": 90, e: 3 }]),
      ),
    );
    expect(lines).toEqual([
      "\ncontent / s",
      "  req/s: 100 → 90 (-10.0%)",
      "  e: 0 → 3 (n/a (was 0))",
    ]);
  });
});
