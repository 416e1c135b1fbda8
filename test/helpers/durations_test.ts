import { describe, expect, it } from "vitest";
import { type FileDuration, limitOf, mergeDurations, slowestLines, tooSlow } from "./durations.ts";

const file = (name: string, project: string, testsMs: number): FileDuration => ({
  file: name,
  project,
  ms: testsMs + 100,
  importMs: 100,
  testsMs,
  state: "passed",
});

const FILES = [
  file("services/a_test.ts", "unit", 2_400),
  file("test/b_test.ts", "integration", 30_000),
  file("services/c_test.ts", "unit", 2_000),
  file("services/d_test.ts", "unit", 9_000),
  // Slow to import (vitest's transforms), quick to test: within the limit.
  { ...file("services/e_test.ts", "unit", 300), ms: 6_000, importMs: 5_700 },
];

describe("test file durations", () => {
  it("finds the files of one project whose tests took over the limit, slowest first", () => {
    expect(tooSlow(FILES, "unit", 2_000).map((f) => f.file)).toEqual([
      "services/d_test.ts",
      "services/a_test.ts",
    ]);
    expect(tooSlow(FILES, "unit", 10_000)).toEqual([]);
    expect(tooSlow(FILES, "integration", 2_000).map((f) => f.file)).toEqual(["test/b_test.ts"]);
  });

  it("reads the limit from its setting and refuses one that is not a positive number", () => {
    expect(limitOf(undefined)).toBeUndefined();
    expect(limitOf(" ")).toBeUndefined();
    expect(limitOf("2000")).toBe(2_000);
    expect(() => limitOf("2s")).toThrow(/CRM_UNIT_FILE_LIMIT_MS/);
    expect(() => limitOf("0")).toThrow(/positive/);
  });

  it("lists the slowest files with their times and projects", () => {
    const lines = slowestLines(FILES, 2);
    expect(lines[0]).toBe("slowest 2 of 5 test files (all / import / tests):");
    expect(lines[1]).toMatch(/^ {2}30\.1 s {4}0\.1 s {3}30\.0 s {2}integration test\/b_test\.ts$/);
    expect(lines[2]).toContain("services/d_test.ts");
    expect(lines).toHaveLength(3);
  });

  it("keeps earlier figures of files a run did not run, and replaces those it ran", () => {
    const earlier = [
      file("test/b_test.ts", "integration", 30_000),
      file("test/b_test.ts", "storages", 50_000),
      file("services/a_test.ts", "unit", 1_000),
    ];
    const merged = mergeDurations(earlier, [file("test/b_test.ts", "integration", 12_000)]);
    expect(merged.map((f) => [f.project, f.file, f.testsMs])).toEqual([
      ["storages", "test/b_test.ts", 50_000],
      ["integration", "test/b_test.ts", 12_000],
      ["unit", "services/a_test.ts", 1_000],
    ]);
  });
});
