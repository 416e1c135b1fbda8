import { describe, expect, it } from "vitest";
import { longestFirst, type Placed, recordedDurations } from "./longest_first.ts";

describe("the order of a run's files", () => {
  it("keeps projects apart and starts each one's longest files first", () => {
    const files: (Placed & { name: string })[] = [
      { name: "unit short", groupOrder: 0, project: "unit", ms: 10 },
      { name: "integration short", groupOrder: 0, project: "integration", ms: 900 },
      { name: "unit long", groupOrder: 0, project: "unit", ms: 1_500 },
      { name: "integration unknown", groupOrder: 0, project: "integration", ms: 0 },
      { name: "integration long", groupOrder: 0, project: "integration", ms: 21_000 },
      { name: "node", groupOrder: -1, project: "node", ms: 1 },
    ];
    expect(longestFirst(files, (f) => f).map((f) => f.name)).toEqual([
      "node",
      "integration long",
      "integration short",
      "integration unknown",
      "unit long",
      "unit short",
    ]);
  });

  it("reads the durations reporter's output by project and file", () => {
    const recorded = recordedDurations([
      {
        file: "test/a_test.ts",
        project: "integration",
        ms: 12,
        importMs: 2,
        testsMs: 10,
        state: "passed",
      },
      {
        file: "test/a_test.ts",
        project: "storages",
        ms: 40,
        importMs: 5,
        testsMs: 35,
        state: "passed",
      },
    ]);
    expect(recorded.get("integration:test/a_test.ts")).toBe(12);
    expect(recorded.get("storages:test/a_test.ts")).toBe(40);
    expect(recorded.get("unit:test/a_test.ts")).toBeUndefined();
  });
});
