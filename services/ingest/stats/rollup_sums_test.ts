import { describe, expect, it } from "vitest";
import { propertyText, rollupOf, type RowRecord, type VisitRecord } from "./rollup_sums.ts";
import { KIND } from "./dimensions.ts";

const visit = (channel: string | null, pv: number, ev: number, ms: number): VisitRecord => ({
  attributes: { channel, exit_page: "/x" },
  pageviews: pv,
  events: ev,
  durationMs: ms,
});
const row = (fields: Partial<RowRecord>): RowRecord => ({
  kind: KIND.pageview,
  name: null,
  page: "/",
  props: null,
  value: null,
  currency: null,
  visitorNumber: 1,
  visitorKey: "v1",
  attributes: { channel: "paid", exit_page: "/x" },
  ...fields,
});

describe("rollupOf", () => {
  const wanted = { all: true, attributes: ["channel"], page: true, props: ["plan"] };
  const groups = rollupOf(
    [visit("paid", 1, 0, 0), visit("paid", 2, 1, 5000), visit(null, 1, 0, 0)],
    [
      row({}),
      row({ visitorNumber: 2, visitorKey: "v2", page: "/a" }),
      row({
        kind: KIND.event,
        name: "signup",
        page: "/a",
        props: { plan: "pro", seats: 2.5 },
        value: 900,
        currency: "EUR",
      }),
      row({ kind: KIND.lead, page: null, visitorNumber: null, visitorKey: "s-anon" }),
    ],
    wanted,
  );
  const sums = (key: [string, string | null, string | null]) =>
    groups.get(JSON.stringify(key))?.sums;

  it("counts visits where they begin and rows under their visit's values", () => {
    expect(sums(["", null, null])).toMatchObject({
      visits: 3,
      bounces: 2,
      durationMs: 5000,
      visitPageviews: 4,
      pageviews: 2,
      events: 1,
      leads: 1,
      revenue: new Map([["EUR", 900n]]),
    });
    expect(sums(["", null, null])!.visitorNumbers).toEqual(new Set([1, 2]));
    expect(sums(["", null, null])!.visitorKeys).toEqual(new Set(["s-anon"]));
    expect(sums(["visit:channel", "paid", null])).toMatchObject({ visits: 2, pageviews: 2 });
    expect(sums(["visit:channel", null, null])).toMatchObject({ visits: 1, pageviews: 0 });
  });

  it("counts rows by page and by property with their event name, every row under a property", () => {
    expect(sums(["event:page", "/a", "signup"])).toMatchObject({ events: 1, pageviews: 0 });
    expect(sums(["event:page", "/a", null])).toMatchObject({ pageviews: 1 });
    expect(sums(["event:props:plan", "pro", "signup"])).toMatchObject({ events: 1 });
    expect(sums(["event:props:plan", null, null])).toMatchObject({ pageviews: 2, leads: 1 });
    expect(sums(["event:props:seats", "2.5", "signup"])).toBeUndefined(); // not wanted
  });

  it("writes properties as the reports read them", () => {
    expect([propertyText(3), propertyText(2.5), propertyText(true), propertyText("x")]).toEqual(
      ["3", "2.5", "true", "x"],
    );
    expect(propertyText(undefined)).toBeNull();
  });
});
