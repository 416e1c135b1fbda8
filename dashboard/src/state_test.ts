import { describe, expect, it } from "vitest";
import {
  compareOf,
  daysBetween,
  DEFAULT_VIEW,
  funnelFilters,
  intervalOf,
  intervalsFor,
  isDay,
  validStep,
  withFilter,
  withoutFilter,
} from "./state.ts";

describe("the view's rules", () => {
  it("knows real days and counts them inclusively", () => {
    expect(isDay("2026-02-28")).toBe(true);
    expect(isDay("2026-02-29")).toBe(false);
    expect(isDay("2026-2-1")).toBe(false);
    expect(daysBetween("2026-11-01", "2026-11-01")).toBe(1);
    expect(daysBetween("2026-10-01", "2026-10-31")).toBe(31);
  });

  it("offers intervals that fit the range, and picks a sensible one", () => {
    expect(intervalsFor("realtime", 1)).toEqual(["minute"]);
    expect(intervalsFor("today", 1)).toEqual(["hour"]);
    expect(intervalsFor("7d", 7)).toEqual(["hour", "day"]);
    expect(intervalsFor("30d", 30)).toEqual(["day", "week"]);
    expect(intervalsFor("year", 331)).toEqual(["day", "week", "month"]);
    expect(intervalsFor("all", 800)).toEqual(["week", "month"]);
    expect(intervalOf({ ...DEFAULT_VIEW, range: "7d" }, 7)).toBe("day");
    expect(intervalOf({ ...DEFAULT_VIEW, range: "7d", interval: "hour" }, 7)).toBe("hour");
    // An interval the range cannot take falls back to the default.
    expect(intervalOf({ ...DEFAULT_VIEW, range: "today", interval: "month" }, 1)).toBe("hour");
    expect(intervalOf({ ...DEFAULT_VIEW, range: "year" }, 331)).toBe("month");
    expect(intervalOf({ ...DEFAULT_VIEW, range: "all" }, 28)).toBe("day");
  });

  it("compares nothing when off or for all time (the API refuses that)", () => {
    expect(compareOf(DEFAULT_VIEW)).toBe("previous_period");
    expect(compareOf({ ...DEFAULT_VIEW, compare: "off" })).toBeUndefined();
    expect(compareOf({ ...DEFAULT_VIEW, range: "all" })).toBeUndefined();
    expect(compareOf({ ...DEFAULT_VIEW, compare: ["2025-01-01", "2025-01-31"] })).toEqual([
      "2025-01-01",
      "2025-01-31",
    ]);
  });

  it("adds filters, replacing an `is` on the same dimension, never twice; removes them", () => {
    let view = withFilter({ ...DEFAULT_VIEW, more: "sources" }, ["is", "visit:channel", ["paid"]]);
    expect(view.more).toBeUndefined(); // a row clicked in a full list closes it
    view = withFilter(view, ["is_not", "visit:country", ["US"]]);
    view = withFilter(view, ["is", "visit:channel", ["organic"]]);
    view = withFilter(view, ["is_not", "visit:country", ["US"]]);
    expect(view.filters).toEqual([
      ["is_not", "visit:country", ["US"]],
      ["is", "visit:channel", ["organic"]],
    ]);
    expect(withoutFilter(view, 0).filters).toEqual([["is", "visit:channel", ["organic"]]]);
  });

  it("gives a funnel the visit filters only, and complete steps", () => {
    expect(funnelFilters([
      ["is", "visit:channel", ["paid"]],
      ["is", "event:page", ["/"]],
      ["is", "event:name", ["purchase"]],
    ])).toEqual([["is", "visit:channel", ["paid"]]]);
    expect(validStep({ page: "  /x* " })).toEqual({ page: "/x*" });
    expect(validStep({ page: " " })).toBeUndefined();
    expect(validStep({ event: "" })).toBeUndefined();
    expect(validStep({ lead: true })).toEqual({ lead: true });
  });
});
