import { describe, expect, it } from "vitest";
import type { Answer } from "./api.ts";
import { seriesOf } from "./series.ts";

function answer(rows: [string, number][], labels?: string[]): Pick<Answer, "results" | "meta"> {
  return {
    results: rows.map(([label, value]) => ({ dimensions: [label], metrics: [value] })),
    meta: { timeZone: "UTC", dateRange: ["", ""], totalRows: rows.length, timeLabels: labels },
  };
}

describe("the chart's series", () => {
  it("draws every bucket of the range, a 0 where there is no row", () => {
    const series = seriesOf(
      answer([["2026-11-02", 5]], ["2026-11-01", "2026-11-02", "2026-11-03"]),
    );
    expect(series).toEqual({
      labels: ["2026-11-01", "2026-11-02", "2026-11-03"],
      values: [0, 5, 0],
    });
  });

  it("matches the compared range bucket by bucket, by position", () => {
    const now = answer([["2026-11-08", 4]], ["2026-11-08", "2026-11-09", "2026-11-10"]);
    const before = answer([["2026-11-01", 2], ["2026-11-02", 7]], ["2026-11-01", "2026-11-02"]);
    expect(seriesOf(now, before)).toEqual({
      labels: ["2026-11-08", "2026-11-09", "2026-11-10"],
      values: [4, 0, 0],
      comparedLabels: ["2026-11-01", "2026-11-02", null],
      compared: [2, 7, null],
    });
  });

  it("falls back to the rows' labels without time labels", () => {
    expect(seriesOf(answer([["a", 1], ["b", 2]])).labels).toEqual(["a", "b"]);
  });
});
