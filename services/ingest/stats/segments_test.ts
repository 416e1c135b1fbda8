import { describe, expect, it } from "vitest";
import { expandSegments, parseSegmentBody, plainFilters, segmentIdsOf } from "./segments.ts";
import { type Filter, parseQuery, QueryError } from "./query.ts";

const site = { paramKeys: new Set(["plan"]) };
const country = (operator: Filter["operator"], ...values: string[]): Filter => ({
  operator,
  dimension: "visit:country",
  values,
});
const segment = (operator: Filter["operator"], ...segments: Filter[][]): Filter => ({
  operator,
  dimension: "segment",
  values: segments.map((_, i) => `s${i}`),
  segments,
});

describe("a segment filter as plain filters", () => {
  it("is one segment's visit: filters", () => {
    const filters = [country("is", "DE"), {
      ...country("is", "mobile"),
      dimension: "visit:device",
    }];
    expect(plainFilters(segment("is", filters as Filter[]))).toEqual(filters);
  });

  it("is each one-filter segment's complement under is_not, nulls included", () => {
    expect(plainFilters(segment("is_not", [country("is", "DE")], [country("contains_not", "A")])))
      .toEqual([country("is_not", "DE"), country("contains", "A")]);
  });

  it("is one filter of all values for alike one-filter segments under is", () => {
    expect(plainFilters(segment("is", [country("is", "DE")], [country("is", "AT", "DE")])))
      .toEqual([country("is", "DE", "AT")]);
  });

  it("stays a segment filter where no plain filters say the same", () => {
    const event: Filter = { operator: "is", dimension: "event:name", values: ["signup"] };
    expect(plainFilters(segment("is", [event]))).toBeUndefined();
    expect(plainFilters(segment("is_not", [country("is", "DE"), country("is", "AT")])))
      .toBeUndefined();
    expect(plainFilters(segment("is", [country("is", "DE")], [country("is_not", "AT")])))
      .toBeUndefined();
    const kept = segment("is", [event]);
    expect(expandSegments([country("is", "DE"), kept])).toEqual([country("is", "DE"), kept]);
  });
});

describe("segment bodies and the segment filter", () => {
  it("reads a name and filters by the query's rules", () => {
    expect(
      parseSegmentBody({ name: " Plans ", filters: [["is", "event:props:plan", ["pro"]]] }, site),
    )
      .toEqual({ name: "Plans", filters: [["is", "event:props:plan", ["pro"]]] });
    const fault = (body: Record<string, unknown>) => {
      try {
        parseSegmentBody(body as never, site);
      } catch (error) {
        if (error instanceof QueryError) return error.field;
        throw error;
      }
      return "accepted";
    };
    expect(fault({ filters: [["is", "visit:country", ["DE"]]] })).toBe("name");
    expect(fault({ name: "x", filters: [["is", "event:props:seats", ["1"]]] })).toBe("filters[0]");
    expect(fault({ name: "x", filters: [["is", "time:day", ["2026-01-01"]]] })).toBe("filters[0]");
  });

  it("finds the ids a body names, and reads them with the stored filters", () => {
    const filters = [["is", "segment", ["a", "b"]], ["is", "visit:country", ["DE"]], [
      "is_not",
      "segment",
      ["b", "c"],
    ]];
    expect(segmentIdsOf(filters)).toEqual(["a", "b", "c"]);
    const stored = new Map([["a", [["is", "visit:country", ["DE"]]]]]);
    const query = parseQuery(
      { metrics: ["visitors"], date_range: "7d", filters: [["is", "segment", ["a"]]] },
      { ...site, segments: stored },
    );
    expect(query.filters[0]).toMatchObject({
      dimension: "segment",
      values: ["a"],
      segments: [[country("is", "DE")]],
    });
    expect(() =>
      parseQuery(
        { metrics: ["visitors"], date_range: "7d", filters: [["is", "segment", ["zz"]]] },
        { ...site, segments: stored },
      )
    ).toThrow(/unknown segment "zz"/);
  });
});
