/**
 * Reading a reports query: every rule of the body, judged in the contract's
 * field order, the first fault thrown as a QueryError naming the field (with
 * a path such as "filters[1]") and the problem. Pure.
 */
import type { Json } from "../../lib/stats/wire.ts";
import type { QueryField } from "../../lib/stats/names.ts";
import { ianaTimeZone } from "../../lib/formats.ts";
import { isJsonObject } from "../../lib/json.ts";
import { type Grain, parseDay } from "./calendar.ts";

export const METRIC_NAMES = [
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
export type MetricName = typeof METRIC_NAMES[number];

export const TIME_DIMENSIONS = ["time:hour", "time:day", "time:week", "time:month"] as const;
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
] as const;
export const EVENT_DIMENSIONS = ["event:name", "event:page"] as const;
export const DIMENSION_NAMES = [...TIME_DIMENSIONS, ...VISIT_DIMENSIONS, ...EVENT_DIMENSIONS];

export type TimeDimension = typeof TIME_DIMENSIONS[number];
export type VisitDimension = typeof VISIT_DIMENSIONS[number];
export type EventDimension = typeof EVENT_DIMENSIONS[number];
export type DimensionName = TimeDimension | VisitDimension | EventDimension;

export const PRESETS = ["today", "yesterday", "7d", "30d", "month", "year", "all"] as const;
export type Preset = typeof PRESETS[number];

export const OPERATORS = ["is", "is_not", "contains", "contains_not"] as const;
export type Operator = typeof OPERATORS[number];

export interface Filter {
  operator: Operator;
  dimension: VisitDimension | EventDimension;
  values: string[];
}

export interface Order {
  by: MetricName | DimensionName;
  direction: "asc" | "desc";
}

export type DateRangeQuery = { preset: Preset } | { first: string; last: string };

export interface StatsQuery {
  metrics: MetricName[];
  dateRange: DateRangeQuery;
  dimensions: DimensionName[];
  filters: Filter[];
  /** The ordering asked for, or the default one when none was. */
  orderBy: Order[];
  includeTotals: boolean;
  includeBots: boolean;
  limit: number;
  offset: number;
  /** As sent (letter case made the zone's own), when sent. */
  timeZone?: string;
}

export const MAX_DIMENSIONS = 3;
export const MAX_LIMIT = 10_000;
export const DEFAULT_LIMIT = 1000;
const MAX_OFFSET = 2 ** 31 - 1;

/** The body field at fault, with a path after it when a part of it is, and what is wrong. */
export class QueryError extends Error {
  override name = "QueryError";
  constructor(readonly field: string, readonly problem: string) {
    super(`${field}: ${problem}`);
  }
}

export const isTimeDimension = (d: DimensionName): d is TimeDimension => d.startsWith("time:");
export const isVisitDimension = (d: DimensionName): d is VisitDimension => d.startsWith("visit:");
export const isEventDimension = (d: DimensionName): d is EventDimension => d.startsWith("event:");
export const grainOf = (d: TimeDimension): Grain => d.slice(5) as Grain;

function oneOfText(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names[0];
}

function named<T extends string>(
  value: Json,
  allowed: readonly T[],
  field: string,
  what: string,
): T {
  if (typeof value !== "string") throw new QueryError(field, `must be a ${what} name (a string)`);
  if (!(allowed as readonly string[]).includes(value)) {
    throw new QueryError(field, `unknown ${what} "${value}"; one of ${oneOfText(allowed)}`);
  }
  return value as T;
}

function list(value: Json | undefined, field: string, what: string): Json[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new QueryError(field, `must be a list of ${what}`);
  return value;
}

function metrics(value: Json | undefined): MetricName[] {
  if (value === undefined || value === null) {
    throw new QueryError("metrics", "is required: a list of metric names");
  }
  const items = list(value, "metrics", "metric names")!;
  if (items.length === 0) throw new QueryError("metrics", "must name at least one metric");
  const seen = new Set<string>();
  return items.map((item, i) => {
    const name = named(item, METRIC_NAMES, `metrics[${i}]`, "metric");
    if (seen.has(name)) throw new QueryError(`metrics[${i}]`, `"${name}" is repeated`);
    seen.add(name);
    return name;
  });
}

function dateRange(value: Json | undefined): DateRangeQuery {
  const shapes = `${oneOfText(PRESETS.map((p) => `"${p}"`))}, or ["YYYY-MM-DD", "YYYY-MM-DD"]`;
  if (value === undefined || value === null) {
    throw new QueryError("date_range", `is required: ${shapes}`);
  }
  if (typeof value === "string") {
    if ((PRESETS as readonly string[]).includes(value)) return { preset: value as Preset };
    throw new QueryError("date_range", `unknown range "${value}"; ${shapes}`);
  }
  if (!Array.isArray(value) || value.length !== 2) {
    throw new QueryError("date_range", `must be ${shapes}`);
  }
  const days = value.map((day, i) => {
    const parsed = typeof day === "string" ? parseDay(day) : undefined;
    if (!parsed) throw new QueryError(`date_range[${i}]`, "must be a date written YYYY-MM-DD");
    return parsed;
  });
  if (Temporal.PlainDate.compare(days[0], days[1]) > 0) {
    throw new QueryError("date_range", "the first day must not be after the last");
  }
  return { first: days[0].toString(), last: days[1].toString() };
}

function dimensions(value: Json | undefined): DimensionName[] {
  const items = list(value, "dimensions", "dimension names");
  if (!items) return [];
  if (items.length > MAX_DIMENSIONS) {
    throw new QueryError("dimensions", `must name at most ${MAX_DIMENSIONS} dimensions`);
  }
  const seen = new Set<string>();
  return items.map((item, i) => {
    const name = named(item, DIMENSION_NAMES, `dimensions[${i}]`, "dimension");
    if (seen.has(name)) throw new QueryError(`dimensions[${i}]`, `"${name}" is repeated`);
    seen.add(name);
    return name;
  });
}

function filters(value: Json | undefined): Filter[] {
  const items = list(value, "filters", "[operator, dimension, values]");
  if (!items) return [];
  return items.map((item, i) => {
    const field = `filters[${i}]`;
    if (!Array.isArray(item) || item.length !== 3) {
      throw new QueryError(field, "must be [operator, dimension, values]");
    }
    const [op, dim, values] = item;
    const operator = named(op, OPERATORS, field, "operator");
    const dimension = named(dim, DIMENSION_NAMES, field, "dimension");
    if (isTimeDimension(dimension)) {
      throw new QueryError(field, `${dimension} cannot be filtered; date_range chooses the days`);
    }
    if (
      !Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")
    ) {
      throw new QueryError(field, "values must be a non-empty list of strings");
    }
    if ((values as string[]).some((v) => v.includes("\u0000"))) {
      throw new QueryError(field, "values must not contain the NUL character");
    }
    return { operator, dimension, values: values as string[] };
  });
}

function orderBy(
  value: Json | undefined,
  query: Pick<StatsQuery, "metrics" | "dimensions">,
): Order[] {
  const items = list(value, "order_by", '[name, "asc" or "desc"]');
  if (!items) return defaultOrder(query);
  const names = new Set<string>([...query.metrics, ...query.dimensions]);
  const seen = new Set<string>();
  return items.map((item, i) => {
    const field = `order_by[${i}]`;
    if (!Array.isArray(item) || item.length !== 2) {
      throw new QueryError(field, 'must be [metric or dimension, "asc" or "desc"]');
    }
    const [name, direction] = item;
    if (typeof name !== "string" || !names.has(name)) {
      throw new QueryError(field, `must name a metric or dimension of this query`);
    }
    if (seen.has(name)) throw new QueryError(field, `"${name}" is repeated`);
    seen.add(name);
    if (direction !== "asc" && direction !== "desc") {
      throw new QueryError(field, 'the direction must be "asc" or "desc"');
    }
    return { by: name as MetricName | DimensionName, direction };
  });
}

/** Time dimensions ascending, then the first metric descending. */
export function defaultOrder(query: Pick<StatsQuery, "metrics" | "dimensions">): Order[] {
  return [
    ...query.dimensions.filter(isTimeDimension).map((by) => ({ by, direction: "asc" as const })),
    { by: query.metrics[0], direction: "desc" },
  ];
}

function flag(value: Json | undefined, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw new QueryError(field, "must be true or false");
  return value;
}

function include(value: Json | undefined): { totals: boolean; bots: boolean } {
  if (value === undefined || value === null) return { totals: false, bots: false };
  if (!isJsonObject<Json>(value)) {
    throw new QueryError("include", 'must be an object {"totals", "bots"}');
  }
  return { totals: flag(value.totals, "include.totals"), bots: flag(value.bots, "include.bots") };
}

function integer(
  value: Json | undefined,
  field: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new QueryError(field, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function timeZone(value: Json | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const zone = typeof value === "string" ? ianaTimeZone(value) : undefined;
  if (zone === undefined) {
    throw new QueryError("time_zone", "must be an IANA time zone name such as Europe/Berlin");
  }
  return zone;
}

/** The query a body asks for, defaults filled in; throws QueryError at the first fault. */
export function parseQuery(body: Partial<Record<QueryField, Json>>): StatsQuery {
  const metricList = metrics(body.metrics);
  const range = dateRange(body.date_range);
  const dimensionList = dimensions(body.dimensions);
  const filterList = filters(body.filters);
  const conversion = metricList.indexOf("conversion_rate");
  if (conversion >= 0 && !filterList.some((f) => f.dimension === "event:name")) {
    throw new QueryError(
      `metrics[${conversion}]`,
      "conversion_rate needs an event:name filter naming the conversion",
    );
  }
  const order = orderBy(body.order_by, { metrics: metricList, dimensions: dimensionList });
  const included = include(body.include);
  const limit = integer(body.limit, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
  const offset = integer(body.offset, "offset", 0, 0, MAX_OFFSET);
  const zone = timeZone(body.time_zone);
  return {
    metrics: metricList,
    dateRange: range,
    dimensions: dimensionList,
    filters: filterList,
    orderBy: order,
    includeTotals: included.totals,
    includeBots: included.bots,
    limit,
    offset,
    ...(zone === undefined ? {} : { timeZone: zone }),
  };
}
