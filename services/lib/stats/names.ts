/**
 * The public names of the reports query (POST /stats/v1/query) and the enums
 * of crm.stats.v1 they stand for, in one place: ingest-service reads a query
 * with them, the gateway and the command line write the answer with them.
 */
import { create } from "@bufbuild/protobuf";
import {
  ComparePreset,
  DateRangePreset,
  Dimension,
  Direction,
  FilterOperator,
  Metric,
  type QueryDimension,
  QueryDimensionSchema,
} from "../gen/crm/stats/v1/stats_pb.ts";

/** Metric names in the contract's order. */
export const METRICS: ReadonlyMap<string, Metric> = new Map([
  ["pageviews", Metric.PAGEVIEWS],
  ["visits", Metric.VISITS],
  ["visitors", Metric.VISITORS],
  ["events", Metric.EVENTS],
  ["leads", Metric.LEADS],
  ["revenue", Metric.REVENUE],
  ["bounce_rate", Metric.BOUNCE_RATE],
  ["visit_duration", Metric.VISIT_DURATION],
  ["views_per_visit", Metric.VIEWS_PER_VISIT],
  ["conversion_rate", Metric.CONVERSION_RATE],
]);

/** The fixed dimension names; event:props:KEY is EVENT_PROPS with its key. */
export const DIMENSIONS: ReadonlyMap<string, Dimension> = new Map([
  ["time:minute", Dimension.TIME_MINUTE],
  ["time:hour", Dimension.TIME_HOUR],
  ["time:day", Dimension.TIME_DAY],
  ["time:week", Dimension.TIME_WEEK],
  ["time:month", Dimension.TIME_MONTH],
  ["visit:channel", Dimension.VISIT_CHANNEL],
  ["visit:source", Dimension.VISIT_SOURCE],
  ["visit:utm_source", Dimension.VISIT_UTM_SOURCE],
  ["visit:utm_medium", Dimension.VISIT_UTM_MEDIUM],
  ["visit:utm_campaign", Dimension.VISIT_UTM_CAMPAIGN],
  ["visit:utm_term", Dimension.VISIT_UTM_TERM],
  ["visit:utm_content", Dimension.VISIT_UTM_CONTENT],
  ["visit:ad_link", Dimension.VISIT_AD_LINK],
  ["visit:entry_page", Dimension.VISIT_ENTRY_PAGE],
  ["visit:country", Dimension.VISIT_COUNTRY],
  ["visit:device", Dimension.VISIT_DEVICE],
  ["visit:browser", Dimension.VISIT_BROWSER],
  ["visit:os", Dimension.VISIT_OS],
  ["visit:visitor_type", Dimension.VISIT_VISITOR_TYPE],
  ["visit:exit_page", Dimension.VISIT_EXIT_PAGE],
  ["visit:referrer", Dimension.VISIT_REFERRER],
  ["visit:screen", Dimension.VISIT_SCREEN],
  ["event:name", Dimension.EVENT_NAME],
  ["event:page", Dimension.EVENT_PAGE],
]);

const PROPS_PREFIX = "event:props:";

/** A dimension name as crm.stats.v1.QueryDimension. */
export function queryDimensionOf(name: string): QueryDimension {
  if (name.startsWith(PROPS_PREFIX)) {
    return create(QueryDimensionSchema, {
      dimension: Dimension.EVENT_PROPS,
      propertyKey: name.slice(PROPS_PREFIX.length),
    });
  }
  return create(QueryDimensionSchema, { dimension: DIMENSIONS.get(name)! });
}

/** A crm.stats.v1.QueryDimension's name, or null for one no name stands for. */
export function dimensionNameOf(dimension: QueryDimension | undefined): string | null {
  if (!dimension) return null;
  if (dimension.dimension === Dimension.EVENT_PROPS) {
    return `${PROPS_PREFIX}${dimension.propertyKey}`;
  }
  return DIMENSION_NAME.get(dimension.dimension) ?? null;
}

export const OPERATORS: ReadonlyMap<string, FilterOperator> = new Map([
  ["is", FilterOperator.IS],
  ["is_not", FilterOperator.IS_NOT],
  ["contains", FilterOperator.CONTAINS],
  ["contains_not", FilterOperator.CONTAINS_NOT],
]);

export const DIRECTIONS: ReadonlyMap<string, Direction> = new Map([
  ["asc", Direction.ASC],
  ["desc", Direction.DESC],
]);

export const PRESETS: ReadonlyMap<string, DateRangePreset> = new Map([
  ["today", DateRangePreset.TODAY],
  ["yesterday", DateRangePreset.YESTERDAY],
  ["7d", DateRangePreset.LAST_7_DAYS],
  ["30d", DateRangePreset.LAST_30_DAYS],
  ["month", DateRangePreset.MONTH],
  ["year", DateRangePreset.YEAR],
  ["all", DateRangePreset.ALL],
  ["30m", DateRangePreset.LAST_30_MINUTES],
  ["5m", DateRangePreset.LAST_5_MINUTES],
]);

export const COMPARE_PRESET_ENUM: ReadonlyMap<string, ComparePreset> = new Map([
  ["previous_period", ComparePreset.PREVIOUS_PERIOD],
  ["year_over_year", ComparePreset.YEAR_OVER_YEAR],
]);

function inverse<T>(names: ReadonlyMap<string, T>): ReadonlyMap<T, string> {
  return new Map([...names].map(([name, value]) => [value, name]));
}

export const METRIC_NAME = inverse(METRICS);
export const DIMENSION_NAME = inverse(DIMENSIONS);
export const OPERATOR_NAME = inverse(OPERATORS);
export const DIRECTION_NAME = inverse(DIRECTIONS);
export const PRESET_NAME = inverse(PRESETS);
export const COMPARE_PRESET_NAME = inverse(COMPARE_PRESET_ENUM);

/** The body members of a query, the contract's field names, in the contract's order. */
export const QUERY_FIELDS = [
  "metrics",
  "date_range",
  "dimensions",
  "filters",
  "order_by",
  "include",
  "limit",
  "offset",
  "time_zone",
] as const;
export type QueryField = typeof QUERY_FIELDS[number];

/** The body members of a funnel, in the contract's order. */
export const FUNNEL_FIELDS = ["date_range", "filters", "include", "steps", "time_zone"] as const;
export type FunnelField = typeof FUNNEL_FIELDS[number];
