import { describe, expect, it } from "vitest";
import { parseFunnel } from "./funnel_query.ts";
import { QueryError } from "./query.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { likePattern } from "./funnel.ts";

const site = { paramKeys: new Set<string>(), eventNames: new Set(["signup"]) };
const base: Record<string, Json> = {
  date_range: "30d",
  steps: [{ page: "/pricing" }, { event: "signup" }],
};

function faultOf(body: Record<string, Json>) {
  try {
    parseFunnel(body, site);
  } catch (error) {
    if (error instanceof QueryError) return { field: error.field, problem: error.problem };
    throw error;
  }
  throw new Error("the funnel was accepted");
}

describe("parseFunnel", () => {
  it("reads every member", () => {
    expect(parseFunnel({
      ...base,
      steps: [{ page: "/blog/*" }, { event: "signup" }, { lead: true }],
      filters: [["is", "visit:country", ["DE"]]],
      include: { bots: true },
      time_zone: "europe/berlin",
    }, site)).toEqual({
      dateRange: { preset: "30d" },
      filters: [{ operator: "is", dimension: "visit:country", values: ["DE"] }],
      includeBots: true,
      steps: [{ page: "/blog/*" }, { event: "signup" }, { lead: true }],
      timeZone: "Europe/Berlin",
    });
  });

  it("names the field of each broken rule", () => {
    expect(faultOf({ steps: base.steps }).field).toBe("date_range");
    expect(faultOf({ ...base, filters: [["is", "event:page", ["/"]]] })).toMatchObject({
      field: "filters[0]",
      problem: expect.stringMatching(/visit: dimensions only/),
    });
    expect(faultOf({ ...base, include: { totals: true } }).field).toBe("include");
    expect(faultOf({ date_range: "7d" }).field).toBe("steps");
    expect(faultOf({ ...base, steps: [{ page: "/" }] }).field).toBe("steps");
    expect(faultOf({ ...base, steps: Array(9).fill({ page: "/" }) }).field).toBe("steps");
    expect(faultOf({ ...base, steps: [{ page: "/" }, { event: "buy" }] }).field).toBe("steps[1]");
    expect(faultOf({ ...base, steps: [{ page: "" }, { lead: true }] }).field).toBe("steps[0]");
    expect(faultOf({ ...base, steps: [{ page: "/", event: "signup" }, { lead: true }] }).field)
      .toBe("steps[0]");
    expect(faultOf({ ...base, steps: [{ lead: false }, { lead: true }] }).field).toBe("steps[0]");
    expect(faultOf({ ...base, steps: [{ click: "/" }, { lead: true }] }).field).toBe("steps[0]");
    expect(faultOf({ ...base, steps: ["/", { lead: true }] }).field).toBe("steps[0]");
  });
});

describe("likePattern", () => {
  it("makes * any run and every other character itself", () => {
    expect(likePattern("/blog/*")).toBe("/blog/%");
    expect(likePattern("/100%_off\\")).toBe("/100\\%\\_off\\\\");
  });
});
