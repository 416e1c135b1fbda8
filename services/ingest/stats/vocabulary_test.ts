/**
 * The reports' vocabulary, the enums of crm.stats.v1 and the engine's
 * declarations name the same things one to one: each name has its own enum
 * value and each enum value (but UNSPECIFIED) its own name; each visit:
 * dimension is one declared visit attribute and each attribute one name;
 * each time dimension is a grain the calendar buckets, each metric one the
 * answer computes, each event dimension one the statements read.
 */
import { describe, expect, it } from "vitest";
import type { DescEnum } from "@bufbuild/protobuf";
import {
  ComparePresetSchema,
  DateRangePresetSchema,
  Dimension,
  DimensionSchema,
  DirectionSchema,
  FilterOperatorSchema,
  MetricSchema,
} from "../../lib/gen/crm/stats/v1/stats_pb.ts";
import {
  COMPARE_PRESET_ENUM,
  DIMENSION_ENUM,
  dimensionNameOf,
  DIRECTION_ENUM,
  METRIC_ENUM,
  OPERATOR_ENUM,
  PRESET_ENUM,
  queryDimensionOf,
} from "../../lib/stats/names.ts";
import {
  COMPARE_PRESETS,
  DIRECTIONS,
  EVENT_DIMENSIONS,
  FIXED_DIMENSIONS,
  METRICS,
  OPERATORS,
  PRESETS,
  SEGMENT_FILTER,
  TIME_DIMENSIONS,
  VISIT_DIMENSIONS,
} from "../../lib/stats/vocabulary.ts";
import { labelOf } from "./calendar.ts";
import { VISIT_ATTRIBUTES } from "./dimensions.ts";
import { emptySums, eventColumn, Params } from "./plan.ts";
import { metricValue } from "./finish.ts";
import { grainOf } from "./query.ts";

/** The faults of two lists of names that should hold the same names once each: none when they do. */
function sameNames(
  what: string,
  names: readonly string[],
  other: readonly string[],
): string[] {
  const faults: string[] = [];
  const repeated = (list: readonly string[]) => list.filter((n, i) => list.indexOf(n) !== i);
  for (const name of repeated(names)) faults.push(`${what}: ${name} is named twice`);
  for (const name of repeated(other)) faults.push(`${what}: ${name} is declared twice`);
  for (const name of names) if (!other.includes(name)) faults.push(`${what}: ${name} missing`);
  for (const name of other) if (!names.includes(name)) faults.push(`${what}: ${name} not a name`);
  return faults;
}

/**
 * The faults of a table of names to enum values against the names and the
 * enum: the table holds every name and no other, no two names share a
 * value, each value is the enum's, and every value of the enum but 0 (and
 * `apart`, named otherwise) has a name.
 */
function enumFaults(
  names: readonly string[],
  table: Readonly<Record<string, number>>,
  schema: DescEnum,
  apart: readonly number[] = [],
): string[] {
  const what = schema.typeName;
  const faults = sameNames(what, names, Object.keys(table));
  const values = Object.entries(table);
  const numbers = schema.values.map((v) => v.number);
  for (const [name, value] of values) {
    const same = values.filter(([, v]) => v === value).map(([n]) => n);
    if (same[0] !== name) faults.push(`${what}: ${name} and ${same[0]} are both ${value}`);
    if (value === 0 || !numbers.includes(value)) faults.push(`${what}: ${name} is ${value}`);
  }
  for (const value of schema.values) {
    if (value.number === 0 || apart.includes(value.number)) continue;
    if (!values.some(([, v]) => v === value.number)) faults.push(`${what}: ${value.name} unnamed`);
  }
  return faults;
}

/** The Dimension values no fixed name stands for: event:props:KEY and the segment filter. */
const NAMED_APART = [Dimension.EVENT_PROPS, Dimension.SEGMENT];

describe("the reports' vocabulary", () => {
  it("names every value of crm.stats.v1's enums once, and nothing else", () => {
    expect([
      ...enumFaults(METRICS, METRIC_ENUM, MetricSchema),
      ...enumFaults(FIXED_DIMENSIONS, DIMENSION_ENUM, DimensionSchema, NAMED_APART),
      ...enumFaults(OPERATORS, OPERATOR_ENUM, FilterOperatorSchema),
      ...enumFaults(DIRECTIONS, DIRECTION_ENUM, DirectionSchema),
      ...enumFaults(PRESETS, PRESET_ENUM, DateRangePresetSchema),
      ...enumFaults(COMPARE_PRESETS, COMPARE_PRESET_ENUM, ComparePresetSchema),
    ]).toEqual([]);
  });

  it("finds a name without its enum value, two names of one value, and an unnamed value", () => {
    const { bounce_rate: _, ...short } = METRIC_ENUM;
    expect(enumFaults(METRICS, short, MetricSchema)).toEqual([
      "crm.stats.v1.Metric: bounce_rate missing",
      "crm.stats.v1.Metric: METRIC_BOUNCE_RATE unnamed",
    ]);
    expect(enumFaults(METRICS, { ...METRIC_ENUM, visits: METRIC_ENUM.pageviews }, MetricSchema))
      .toEqual([
        "crm.stats.v1.Metric: visits and pageviews are both 1",
        "crm.stats.v1.Metric: METRIC_VISITS unnamed",
      ]);
    expect(enumFaults([...METRICS, "sessions"], { ...METRIC_ENUM, sessions: 99 }, MetricSchema))
      .toEqual(["crm.stats.v1.Metric: sessions is 99"]);
    expect(enumFaults(FIXED_DIMENSIONS, DIMENSION_ENUM, DimensionSchema, [Dimension.SEGMENT]))
      .toEqual(["crm.stats.v1.Dimension: DIMENSION_EVENT_PROPS unnamed"]);
  });

  it("names event:props:KEY and the segment filter apart, both ways", () => {
    const props = queryDimensionOf("event:props:plan");
    expect([props.dimension, props.propertyKey]).toEqual([Dimension.EVENT_PROPS, "plan"]);
    expect(dimensionNameOf(props)).toBe("event:props:plan");
    const segment = queryDimensionOf(SEGMENT_FILTER);
    expect(segment.dimension).toBe(Dimension.SEGMENT);
    expect(dimensionNameOf(segment)).toBe(SEGMENT_FILTER);
  });

  it("has each visit: dimension declared once as a visit attribute, and no other", () => {
    const declared = VISIT_ATTRIBUTES.map((a) => a.dimension);
    expect(sameNames("visit attributes", VISIT_DIMENSIONS, declared)).toEqual([]);
    expect(new Set(VISIT_ATTRIBUTES.map((a) => a.column)).size).toBe(VISIT_ATTRIBUTES.length);
    expect(sameNames("visit attributes", VISIT_DIMENSIONS, [...declared, declared[0]])).toEqual([
      `visit attributes: ${declared[0]} is declared twice`,
    ]);
    expect(sameNames("visit attributes", VISIT_DIMENSIONS, declared.slice(1))).toEqual([
      `visit attributes: ${declared[0]} missing`,
    ]);
  });

  it("has a bucket for each time dimension, an answer for each metric, a column for each event dimension", () => {
    const at = Date.UTC(2026, 10, 21, 13, 45);
    expect(TIME_DIMENSIONS.map((d) => labelOf(grainOf(d), "UTC", at))).toEqual([
      "2026-11-21T13:45:00+00:00",
      "2026-11-21T13:00:00+00:00",
      "2026-11-21",
      "2026-11-16",
      "2026-11",
    ]);
    for (const metric of METRICS) expect(metricValue(metric, emptySums())).toBeDefined();
    expect(EVENT_DIMENSIONS.map((d) => eventColumn(d, new Params()))).toEqual(["name", "page"]);
  });
});
