/**
 * The reports' vocabulary, declared once: the metric, dimension, operator,
 * direction and range names of POST /stats/v1/query and /stats/v1/funnel,
 * the body's members and its limits. The parser (services/ingest/stats),
 * the proto mapping (names.ts), the OpenAPI document (and through it the
 * generated client the dashboard uses) all take them from here. Plain data,
 * no imports: the dashboard bundles it as it is.
 *
 * The orders are the contract's where it gives one, and the OpenAPI
 * document's enums otherwise.
 */

/** Metric names; an answer keeps the query's order. */
export const METRICS = [
  "pageviews",
  "visits",
  "visitors",
  "events",
  "leads",
  "revenue",
  "bounce_rate",
  "visit_duration",
  "views_per_visit",
  "conversion_rate",
] as const;
export type MetricName = typeof METRICS[number];

/** The time dimensions: `time:` and the grain of the buckets. */
export const TIME_DIMENSIONS = [
  "time:minute",
  "time:hour",
  "time:day",
  "time:week",
  "time:month",
] as const;
export type TimeDimension = typeof TIME_DIMENSIONS[number];

/** The visit attributes' dimensions (the engine declares how each is read). */
export const VISIT_DIMENSIONS = [
  "visit:channel",
  "visit:source",
  "visit:utm_source",
  "visit:utm_medium",
  "visit:utm_campaign",
  "visit:utm_term",
  "visit:utm_content",
  "visit:ad_link",
  "visit:entry_page",
  "visit:country",
  "visit:device",
  "visit:browser",
  "visit:os",
  "visit:visitor_type",
  "visit:exit_page",
  "visit:referrer",
  "visit:screen",
] as const;
export type VisitDimension = typeof VISIT_DIMENSIONS[number];
/** A visit attribute's name after `visit:`. */
export type VisitAttributeName = VisitDimension extends `visit:${infer A}` ? A : never;

/** The fixed event dimensions; event:props:KEY names a declared event parameter. */
export const EVENT_DIMENSIONS = ["event:name", "event:page"] as const;
export const PROPS_PREFIX = "event:props:";
export type PropsDimension = `event:props:${string}`;
export type EventDimension = typeof EVENT_DIMENSIONS[number] | PropsDimension;

/** Every dimension with a fixed name. */
export const FIXED_DIMENSIONS = [
  ...TIME_DIMENSIONS,
  ...VISIT_DIMENSIONS,
  ...EVENT_DIMENSIONS,
] as const;
export type FixedDimension = typeof FIXED_DIMENSIONS[number];
export type DimensionName = TimeDimension | VisitDimension | EventDimension;

/** The date_range presets of whole local days. */
export const DAY_PRESETS = ["today", "yesterday", "7d", "30d", "month", "year", "all"] as const;
/** The realtime ranges: the rows of the last 30 or 5 minutes up to now. */
export const REALTIME_PRESETS = ["30m", "5m"] as const;
export const PRESETS = [...DAY_PRESETS, ...REALTIME_PRESETS] as const;
export type Preset = typeof PRESETS[number];
export type RealtimePreset = typeof REALTIME_PRESETS[number];

export const COMPARE_PRESETS = ["previous_period", "year_over_year"] as const;
export type ComparePreset = typeof COMPARE_PRESETS[number];

export const OPERATORS = ["is", "is_not", "contains", "contains_not"] as const;
export type Operator = typeof OPERATORS[number];

export const DIRECTIONS = ["asc", "desc"] as const;
export type Direction = typeof DIRECTIONS[number];

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
/** The members a query's include object may hold. */
export const QUERY_INCLUDE = ["totals", "bots", "time_labels", "compare"] as const;

/** The body members of a funnel, in the contract's order. */
export const FUNNEL_FIELDS = ["date_range", "filters", "include", "steps", "time_zone"] as const;
export type FunnelField = typeof FUNNEL_FIELDS[number];
/** The members a funnel's include object may hold. */
export const FUNNEL_INCLUDE = ["bots"] as const;

/** Dimensions a query may name at most. */
export const MAX_DIMENSIONS = 3;
/** Rows per answer: 1 to MAX_LIMIT, DEFAULT_LIMIT when the query names none. */
export const MAX_LIMIT = 10_000;
export const DEFAULT_LIMIT = 1000;
/** The most rows a query may skip (a signed 32-bit integer, as crm.stats.v1 carries it). */
export const MAX_OFFSET = 2 ** 31 - 1;
/** Steps a funnel holds. */
export const MIN_STEPS = 2;
export const MAX_STEPS = 8;

/** The filter of saved segments, `["is" | "is_not", "segment", [ID, ...]]`: a filter's name, not a dimension's. */
export const SEGMENT_FILTER = "segment";
/** A segment's name: 1 to this many characters. */
export const MAX_SEGMENT_NAME = 80;
/** A segment's filters: 1 to this many, on visit: and event: dimensions. */
export const MAX_SEGMENT_FILTERS = 10;
/** Segments a site may hold. */
export const MAX_SEGMENTS = 100;
