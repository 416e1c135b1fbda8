import { describe, expect, it } from "vitest";
import type { SiteInfo } from "./api.ts";
import { panelOf, tabOf } from "./panels.ts";
import {
  cardMetrics,
  chartQuery,
  comparedChartQuery,
  conversionQuery,
  funnelQuery,
  listQuery,
  summaryQuery,
} from "./queries.ts";
import { DEFAULT_VIEW, type View } from "./state.ts";

const SITE: SiteInfo = {
  siteId: "demo",
  timeZone: "Europe/Berlin",
  eventTypes: [{
    name: "purchase",
    title: "Purchase",
    status: "active",
    params: [{ key: "product", type: "string" }],
    bringsRevenue: true,
    currency: "EUR",
  }],
};

const VIEW: View = { ...DEFAULT_VIEW, range: "7d", filters: [["is", "visit:country", ["DE"]]] };

describe("what the page asks", () => {
  it("shows events and revenue cards only where the site has them, conversion under a goal", () => {
    expect(cardMetrics({ ...SITE, eventTypes: [] }, VIEW)).toEqual([
      "visitors",
      "visits",
      "pageviews",
      "bounce_rate",
      "visit_duration",
      "leads",
    ]);
    expect(cardMetrics(SITE, VIEW)).toContain("revenue");
    const goal: View = { ...VIEW, filters: [["is", "event:name", ["purchase"]]] };
    expect(cardMetrics(SITE, goal).at(-1)).toBe("conversion_rate");
  });

  it("asks the totals with the comparison, the chart with every bucket labelled", () => {
    expect(summaryQuery(VIEW, ["visitors"])).toEqual({
      metrics: ["visitors"],
      date_range: "7d",
      filters: VIEW.filters,
      include: { compare: "previous_period" },
    });
    expect(summaryQuery({ ...VIEW, compare: "off" }, ["visitors"]).include).toEqual({});
    expect(chartQuery(VIEW, "day")).toEqual({
      metrics: ["visitors"],
      date_range: "7d",
      filters: VIEW.filters,
      dimensions: ["time:day"],
      include: { time_labels: true },
    });
    expect(comparedChartQuery(VIEW, "day", ["2026-11-01", "2026-11-07"]).date_range).toEqual([
      "2026-11-01",
      "2026-11-07",
    ]);
    expect(chartQuery({ ...VIEW, range: "realtime" }, "minute").date_range).toBe("30m");
  });

  it("lists a tab's rows; rows with a value only where the tab names no empty row", () => {
    const channels = listQuery(tabOf(panelOf("sources"), undefined), VIEW, false);
    expect(channels).toEqual({
      metrics: ["visitors"],
      date_range: "7d",
      filters: VIEW.filters,
      dimensions: ["visit:channel"],
      limit: 9,
    });
    const campaigns = listQuery(tabOf(panelOf("sources"), "utm_campaign"), VIEW, true)!;
    expect(campaigns.filters).toEqual([...VIEW.filters, ["contains", "visit:utm_campaign", [""]]]);
    expect(campaigns.limit).toBe(100);
    expect(campaigns.include).toEqual({ compare: "previous_period" });
    expect(campaigns.metrics).toEqual([
      "visitors",
      "visits",
      "pageviews",
      "bounce_rate",
      "visit_duration",
    ]);
  });

  it("breaks an event down by a declared property once both are chosen", () => {
    const props = tabOf(panelOf("events"), "props");
    expect(listQuery(props, VIEW, false)).toBeUndefined();
    const chosen = listQuery(props, { ...VIEW, event: "purchase", property: "product" }, false)!;
    expect(chosen.dimensions).toEqual(["event:props:product"]);
    expect(chosen.filters).toEqual([
      ...VIEW.filters,
      ["contains", "event:props:product", [""]],
      ["is", "event:name", ["purchase"]],
    ]);
    expect(conversionQuery(VIEW, "purchase")).toEqual({
      metrics: ["conversion_rate"],
      date_range: "7d",
      filters: [...VIEW.filters, ["is", "event:name", ["purchase"]]],
    });
  });

  it("asks a funnel of two or more complete steps with the visit filters only", () => {
    expect(funnelQuery({ ...VIEW, steps: [{ page: "/" }] })).toBeUndefined();
    expect(funnelQuery({ ...VIEW, steps: [{ page: " " }, { lead: true }] })).toBeUndefined();
    expect(
      funnelQuery({
        ...VIEW,
        filters: [...VIEW.filters, ["is", "event:page", ["/"]]],
        steps: [{ page: "/coffee*" }, { event: "purchase" }],
      }),
    ).toEqual({
      date_range: "7d",
      filters: VIEW.filters,
      steps: [{ page: "/coffee*" }, { event: "purchase" }],
    });
  });
});
