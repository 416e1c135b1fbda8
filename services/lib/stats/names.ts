/**
 * The reports' names (vocabulary.ts) and the enums of crm.stats.v1 they
 * stand for: ingest-service writes a query it has read as its proto
 * message with them, the gateway and the command line write the answer
 * back with the contract's names. Each table is a record over the names, so
 * a name without its enum value does not compile; the enums, the names and
 * the engine's declarations are held one to one by
 * services/ingest/stats/vocabulary_test.ts.
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
import {
  type ComparePreset as ComparePresetName,
  type DimensionName,
  type Direction as DirectionName,
  type FixedDimension,
  type MetricName,
  type Operator,
  type Preset,
  PROPS_PREFIX,
  type PropsDimension,
  SEGMENT_FILTER,
} from "./vocabulary.ts";

export const METRIC_ENUM: Readonly<Record<MetricName, Metric>> = {
  pageviews: Metric.PAGEVIEWS,
  visits: Metric.VISITS,
  visitors: Metric.VISITORS,
  events: Metric.EVENTS,
  leads: Metric.LEADS,
  revenue: Metric.REVENUE,
  bounce_rate: Metric.BOUNCE_RATE,
  visit_duration: Metric.VISIT_DURATION,
  views_per_visit: Metric.VIEWS_PER_VISIT,
  conversion_rate: Metric.CONVERSION_RATE,
};

/** The fixed dimensions; event:props:KEY is EVENT_PROPS with its key. */
export const DIMENSION_ENUM: Readonly<Record<FixedDimension, Dimension>> = {
  "time:minute": Dimension.TIME_MINUTE,
  "time:hour": Dimension.TIME_HOUR,
  "time:day": Dimension.TIME_DAY,
  "time:week": Dimension.TIME_WEEK,
  "time:month": Dimension.TIME_MONTH,
  "visit:channel": Dimension.VISIT_CHANNEL,
  "visit:source": Dimension.VISIT_SOURCE,
  "visit:utm_source": Dimension.VISIT_UTM_SOURCE,
  "visit:utm_medium": Dimension.VISIT_UTM_MEDIUM,
  "visit:utm_campaign": Dimension.VISIT_UTM_CAMPAIGN,
  "visit:utm_term": Dimension.VISIT_UTM_TERM,
  "visit:utm_content": Dimension.VISIT_UTM_CONTENT,
  "visit:ad_link": Dimension.VISIT_AD_LINK,
  "visit:entry_page": Dimension.VISIT_ENTRY_PAGE,
  "visit:country": Dimension.VISIT_COUNTRY,
  "visit:device": Dimension.VISIT_DEVICE,
  "visit:browser": Dimension.VISIT_BROWSER,
  "visit:os": Dimension.VISIT_OS,
  "visit:visitor_type": Dimension.VISIT_VISITOR_TYPE,
  "visit:exit_page": Dimension.VISIT_EXIT_PAGE,
  "visit:referrer": Dimension.VISIT_REFERRER,
  "visit:screen": Dimension.VISIT_SCREEN,
  "event:name": Dimension.EVENT_NAME,
  "event:page": Dimension.EVENT_PAGE,
};

export const OPERATOR_ENUM: Readonly<Record<Operator, FilterOperator>> = {
  is: FilterOperator.IS,
  is_not: FilterOperator.IS_NOT,
  contains: FilterOperator.CONTAINS,
  contains_not: FilterOperator.CONTAINS_NOT,
};

export const DIRECTION_ENUM: Readonly<Record<DirectionName, Direction>> = {
  asc: Direction.ASC,
  desc: Direction.DESC,
};

export const PRESET_ENUM: Readonly<Record<Preset, DateRangePreset>> = {
  today: DateRangePreset.TODAY,
  yesterday: DateRangePreset.YESTERDAY,
  "7d": DateRangePreset.LAST_7_DAYS,
  "30d": DateRangePreset.LAST_30_DAYS,
  month: DateRangePreset.MONTH,
  year: DateRangePreset.YEAR,
  all: DateRangePreset.ALL,
  "30m": DateRangePreset.LAST_30_MINUTES,
  "5m": DateRangePreset.LAST_5_MINUTES,
};

export const COMPARE_PRESET_ENUM: Readonly<Record<ComparePresetName, ComparePreset>> = {
  previous_period: ComparePreset.PREVIOUS_PERIOD,
  year_over_year: ComparePreset.YEAR_OVER_YEAR,
};

/** A record of names to enum values turned round: an enum value's name. */
export function inverse<N extends string, E>(names: Readonly<Record<N, E>>): ReadonlyMap<E, N> {
  return new Map(Object.entries(names).map(([name, value]) => [value as E, name as N]));
}

export const METRIC_NAME = inverse(METRIC_ENUM);
export const DIMENSION_NAME = inverse(DIMENSION_ENUM);
export const OPERATOR_NAME = inverse(OPERATOR_ENUM);
export const DIRECTION_NAME = inverse(DIRECTION_ENUM);
export const PRESET_NAME = inverse(PRESET_ENUM);
export const COMPARE_PRESET_NAME = inverse(COMPARE_PRESET_ENUM);

const isProps = (name: DimensionName): name is PropsDimension => name.startsWith(PROPS_PREFIX);

export { SEGMENT_FILTER };

/** A dimension name (or a filter's "segment") as crm.stats.v1.QueryDimension. */
export function queryDimensionOf(name: DimensionName | typeof SEGMENT_FILTER): QueryDimension {
  if (name === SEGMENT_FILTER) {
    return create(QueryDimensionSchema, { dimension: Dimension.SEGMENT });
  }
  if (isProps(name)) {
    return create(QueryDimensionSchema, {
      dimension: Dimension.EVENT_PROPS,
      propertyKey: name.slice(PROPS_PREFIX.length),
    });
  }
  return create(QueryDimensionSchema, { dimension: DIMENSION_ENUM[name] });
}

/** A crm.stats.v1.QueryDimension's name, or null for one no name stands for. */
export function dimensionNameOf(dimension: QueryDimension | undefined): string | null {
  if (!dimension) return null;
  if (dimension.dimension === Dimension.EVENT_PROPS) {
    return `${PROPS_PREFIX}${dimension.propertyKey}`;
  }
  if (dimension.dimension === Dimension.SEGMENT) return SEGMENT_FILTER;
  return DIMENSION_NAME.get(dimension.dimension) ?? null;
}
