import { describe, expect, it } from "vitest";
import { changeOf, compareRows, compareTotals } from "./compare.ts";
import { parseQuery } from "./query.ts";

describe("changeOf", () => {
  it("gives percent changes with one decimal, null where the compared value is 0", () => {
    expect(changeOf("visitors", 150, 100)).toBe(50);
    expect(changeOf("visitors", 1, 3)).toBe(-66.7);
    expect(changeOf("visitors", 79, 80)).toBe(-1.2); // -1.25 rounded half up
    expect(changeOf("visitors", 5, 0)).toBeNull();
    expect(changeOf("visitors", 0, 0)).toBeNull();
    expect(changeOf("views_per_visit", 2.5, 2)).toBe(25);
    expect(changeOf("visit_duration", 90, 60)).toBe(50);
  });

  it("gives rates as the difference in percentage points", () => {
    expect(changeOf("bounce_rate", 40.5, 50)).toBe(-9.5);
    expect(changeOf("conversion_rate", 12.3, 0)).toBe(12.3);
    expect(changeOf("bounce_rate", 0.3, 0.1)).toBe(0.2);
  });

  it("gives revenue per currency of either side", () => {
    const change = changeOf(
      "revenue",
      new Map([["EUR", 1500n], ["USD", 100n]]),
      new Map([["EUR", 1000n], ["GBP", 400n]]),
    );
    expect(change).toEqual(new Map([["EUR", 50], ["GBP", -100], ["USD", null]]));
  });
});

describe("compareRows", () => {
  const query = parseQuery({
    metrics: ["visitors", "bounce_rate"],
    date_range: ["2026-03-02", "2026-03-04"],
    dimensions: ["time:day", "visit:channel"],
    include: { compare: "previous_period" },
  });
  const labels = {
    range: new Map([["time:day" as const, ["2026-03-02", "2026-03-03", "2026-03-04"]]]),
    compared: new Map([["time:day" as const, ["2026-02-27", "2026-02-28", "2026-03-01"]]]),
  };

  it("matches a time value by position and the other values by equality", () => {
    const rows = [
      { dims: ["2026-03-03", "paid"], metrics: [10, 50] },
      { dims: ["2026-03-03", "organic"], metrics: [4, 25] },
    ];
    const compared = [
      { dims: ["2026-02-28", "paid"], metrics: [5, 20] },
      { dims: ["2026-03-01", "organic"], metrics: [99, 99] },
    ];
    expect(compareRows(query, rows, compared, labels)).toEqual([
      { dims: ["2026-02-28", "paid"], metrics: [5, 20], change: [100, 30] },
      // No compared row with data: zero metrics under the compared bucket's label.
      { dims: ["2026-02-28", "organic"], metrics: [0, 0], change: [null, 25] },
    ]);
  });

  it("is null where the compared range has no bucket at the row's position", () => {
    const shorter = {
      range: labels.range,
      compared: new Map([["time:day" as const, ["2026-03-01"]]]),
    };
    expect(
      compareRows(query, [{ dims: ["2026-03-04", "paid"], metrics: [1, 0] }], [], shorter),
    ).toEqual([null]);
  });

  it("compares totals", () => {
    expect(compareTotals(query, [30, 40], [20, 50])).toEqual({
      dims: [],
      metrics: [20, 50],
      change: [50, -10],
    });
  });
});
