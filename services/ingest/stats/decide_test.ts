import { describe, expect, it } from "vitest";
import type { Json } from "../../lib/stats/wire.ts";
import { parseDay, startOfDay } from "./calendar.ts";
import { decide, type DecidedPlan, type Decision } from "./decide.ts";
import { parseQuery } from "./query.ts";

const ZONE = "Europe/Berlin";
const site = { paramKeys: new Set(["plan", "seats"]) };

/** A query of `body` over the local days first..last of `zone`. */
function planned(
  body: Record<string, Json>,
  options: { zone?: string; first?: string; last?: string } = {},
): DecidedPlan {
  const zone = options.zone ?? ZONE;
  const first = parseDay(options.first ?? "2026-10-01")!;
  const last = parseDay(options.last ?? "2026-10-31")!;
  return {
    query: parseQuery({ date_range: [first.toString(), last.toString()], ...body }, site),
    zone,
    startMs: startOfDay(first, zone),
    endMs: startOfDay(last.add({ days: 1 }), zone),
  };
}

const TRAFFIC = ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"];

describe("decide", () => {
  const cases: [string, DecidedPlan, Decision][] = [
    [
      "Traffic by day and channel: the channel's rollups, crossing visits put right",
      planned({ metrics: TRAFFIC, dimensions: ["time:day", "visit:channel"] }),
      {
        source: "rollups",
        grouping: "rows",
        rollup: {
          dimension: "visit:channel",
          column: "channel",
          crossing: true,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "visit metrics with no dimension: the all-visits rollups; visits alone otherwise",
      planned({ metrics: ["visits", "bounce_rate"] }),
      {
        source: "rollups",
        grouping: "visits",
        rollup: {
          dimension: "",
          column: undefined,
          crossing: true,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "row metrics with no dimension: the all-visits rollups, nothing put right; visits alone otherwise",
      planned({ metrics: ["pageviews", "events"] }),
      {
        source: "rollups",
        grouping: "visits",
        rollup: {
          dimension: "",
          column: undefined,
          crossing: false,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "exit pages with visit metrics: rows of visits crossing the end move to their exit in it",
      planned({ metrics: ["visits", "pageviews"], dimensions: ["visit:exit_page"] }),
      {
        source: "rollups",
        grouping: "visits",
        rollup: {
          dimension: "visit:exit_page",
          column: "exit_page",
          crossing: true,
          exitPages: true,
          conversion: false,
        },
      },
    ],
    [
      "exit pages with row metrics alone: their rows move all the same",
      planned({ metrics: ["pageviews", "visitors"], dimensions: ["visit:exit_page"] }),
      {
        source: "rollups",
        grouping: "visits",
        rollup: {
          dimension: "visit:exit_page",
          column: "exit_page",
          crossing: true,
          exitPages: true,
          conversion: false,
        },
      },
    ],
    [
      "a visit filter and the same attribute's breakdown: one rollup dimension",
      planned({
        metrics: ["visits"],
        dimensions: ["time:week", "visit:source"],
        filters: [["contains", "visit:source", ["goo"]]],
      }),
      {
        source: "rollups",
        grouping: "rows",
        rollup: {
          dimension: "visit:source",
          column: "source",
          crossing: true,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "pages with an event:name filter: the page rollups, with their event names",
      planned({
        metrics: ["pageviews", "visitors"],
        dimensions: ["event:page"],
        filters: [["is", "event:name", ["signup"]]],
      }),
      {
        source: "rollups",
        grouping: "rows-alone",
        rollup: {
          dimension: "event:page",
          crossing: false,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "an event property by month: its rollups",
      planned({ metrics: ["events", "revenue"], dimensions: ["event:props:plan", "time:month"] }),
      {
        source: "rollups",
        grouping: "rows-alone",
        rollup: {
          dimension: "event:props:plan",
          crossing: false,
          exitPages: false,
          conversion: false,
        },
      },
    ],
    [
      "events by name: the page rollups hold every row with its event name",
      planned({ metrics: ["events"], dimensions: ["event:name"] }),
      {
        source: "rollups",
        grouping: "rows-alone",
        rollup: { dimension: "event:page", crossing: false, exitPages: false, conversion: false },
      },
    ],
    [
      "conversion rate by week: the page rollups beside the all-visitors sums",
      planned({
        metrics: ["conversion_rate", "events"],
        dimensions: ["time:week"],
        filters: [["is", "event:name", ["purchase"]]],
      }),
      {
        source: "rollups",
        grouping: "rows-alone",
        rollup: { dimension: "event:page", crossing: false, exitPages: false, conversion: true },
      },
    ],
    [
      "conversion rate by page: the rows alone",
      planned({
        metrics: ["conversion_rate"],
        dimensions: ["event:page"],
        filters: [["is", "event:name", ["purchase"]]],
      }),
      { source: "rows", grouping: "rows-alone" },
    ],
    [
      "conversion rate by a visit attribute: the visits and the rows",
      planned({
        metrics: ["conversion_rate"],
        dimensions: ["visit:channel"],
        filters: [["is", "event:name", ["purchase"]]],
      }),
      { source: "visits", grouping: "rows" },
    ],
    [
      "two visit attributes: the visits alone",
      planned({
        metrics: ["visits", "visitors"],
        dimensions: ["visit:entry_page", "visit:source"],
      }),
      { source: "visits", grouping: "visits" },
    ],
    [
      "a visit attribute and a page: the visits and the rows",
      planned({ metrics: ["pageviews"], dimensions: ["visit:channel", "event:page"] }),
      { source: "visits", grouping: "rows" },
    ],
    [
      "a visit metric by page: the visits and the rows",
      planned({ metrics: ["visits"], dimensions: ["event:page"] }),
      { source: "visits", grouping: "rows" },
    ],
    [
      "a page and a property: the rows alone",
      planned({ metrics: ["events"], dimensions: ["event:page", "event:props:plan"] }),
      { source: "rows", grouping: "rows-alone" },
    ],
    [
      "by hour: the visits and the rows",
      planned({ metrics: ["visits"], dimensions: ["time:hour", "visit:channel"] }),
      { source: "visits", grouping: "rows" },
    ],
    [
      "bots included: no rollup holds them",
      planned({ metrics: ["visitors"], include: { bots: true } }),
      { source: "visits", grouping: "visits" },
    ],
    [
      "page views by page with bots: the rows alone",
      planned({ metrics: ["pageviews"], dimensions: ["event:page"], include: { bots: true } }),
      { source: "rows", grouping: "rows-alone" },
    ],
  ];
  it.each(cases)("%s", (_, plan, decision) => {
    expect(decide(plan, ZONE)).toEqual(decision);
  });

  it("reads rollups only in the zone they are built in, and only for whole local days", () => {
    const body = { metrics: ["visitors", "visits"], dimensions: ["time:day"] };
    expect(decide(planned(body), ZONE).source).toBe("rollups");
    expect(decide(planned(body), undefined).source).toBe("visits");
    expect(decide(planned(body, { zone: "UTC" }), ZONE).source).toBe("visits");
    const plan = planned(body);
    expect(decide({ ...plan, startMs: plan.startMs + 3_600_000 }, ZONE).source).toBe("visits");
    expect(decide({ ...plan, endMs: plan.endMs - 60_000 }, ZONE).source).toBe("visits");
    // A 23-hour day is a whole local day.
    const shortDay = planned(body, {
      zone: "Australia/Sydney",
      first: "2026-10-04",
      last: "2026-10-04",
    });
    expect(shortDay.endMs - shortDay.startMs).toBe(23 * 3_600_000);
    expect(decide(shortDay, "Australia/Sydney").source).toBe("rollups");
  });

  it("keeps the base grouping beside rollups, for days not built", () => {
    for (const [, plan] of cases) {
      const decision = decide(plan, ZONE);
      const base = decide(plan, undefined);
      expect(base.rollup).toBeUndefined();
      expect(decision.grouping).toBe(base.grouping);
      expect(base.source).toBe(base.grouping === "rows-alone" ? "rows" : "visits");
    }
  });
});
