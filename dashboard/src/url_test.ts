import { describe, expect, it } from "vitest";
import { DEFAULT_VIEW, type View } from "./state.ts";
import { searchOf, viewOf } from "./url.ts";

describe("the view in the URL", () => {
  it("leaves the default view out of the URL entirely", () => {
    expect(searchOf(DEFAULT_VIEW)).toBe("");
    expect(viewOf("")).toEqual(DEFAULT_VIEW);
  });

  it("reads back every part of a view it wrote", () => {
    const view: View = {
      range: ["2026-11-01", "2026-11-20"],
      compare: ["2025-11-01", "2025-11-20"],
      interval: "week",
      metric: "pageviews",
      filters: [
        ["is", "visit:channel", ["paid"]],
        ["contains_not", "event:page", ["/blog, and more"]],
        ["is", "event:props:product", ["Ethiopia Guji & co=1"]],
        ["is", "visit:country", ["DE", "AT", "CH"]],
        ["contains", "event:page", ["a|b", "back\\slash\\", "|"]],
        ["contains", "event:page", ["x"]],
      ],
      tabs: { sources: "utm_campaign", devices: "screen", events: "props" },
      more: "pages",
      event: "purchase",
      property: "product",
      steps: [{ page: "/coffee/*" }, { event: "purchase" }, { lead: true }],
    };
    const search = searchOf(view);
    expect(search).not.toContain("rk_");
    expect(viewOf(search)).toEqual(view);
  });

  it("keeps a filter of several values one filter (any value matches), apart from another on the same dimension", () => {
    const filters: View["filters"] = [
      ["is", "visit:channel", ["paid", "email"]],
      ["is", "visit:channel", ["paid"]],
    ];
    const search = searchOf({ ...DEFAULT_VIEW, filters });
    expect(new URLSearchParams(search).getAll("f")).toEqual([
      "is,visit:channel,paid|email",
      "is,visit:channel,paid",
    ]);
    expect(viewOf(search).filters).toEqual(filters);
  });

  it("writes presets and comparisons by name", () => {
    const search = searchOf({ ...DEFAULT_VIEW, range: "realtime", compare: "year_over_year" });
    expect(new URLSearchParams(search).get("range")).toBe("realtime");
    expect(new URLSearchParams(search).get("compare")).toBe("year_over_year");
    expect(viewOf("?compare=off").compare).toBe("off");
  });

  it("reads what it does not know as the default, never as an error", () => {
    const view = viewOf(
      "?range=2026-02-30..2026-03-01&compare=2026-03-02..2026-03-01&interval=decade&metric=revenue" +
        "&f=like,visit:channel,paid&f=is,visit:channel&f=is,<script>,x&f=is,visit:country," +
        "&f=is,visit:country,DE||AT&f=is,visit:country,DE|&more=x" +
        "&step=page:&step=event:&step=nothing&sources=Bad-Tab",
    );
    expect(view).toEqual(DEFAULT_VIEW);
  });

  it("keeps at most eight funnel steps, in order", () => {
    const steps = Array.from({ length: 10 }, (_, i) => `step=page:/p${i}`).join("&");
    const view = viewOf(`?${steps}`);
    expect(view.steps).toHaveLength(8);
    expect(view.steps[0]).toEqual({ page: "/p0" });
    expect(view.steps[7]).toEqual({ page: "/p7" });
  });
});
