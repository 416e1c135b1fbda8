/**
 * Reading a reports query: every rule of the body, judged in the contract's
 * field order, the first fault thrown as a QueryError naming the field (with
 * a path such as "filters[1]") and the problem. Pure: what it needs to know
 * of the site (the declared event parameters) comes in as an argument.
 */
import type { Json } from "../../lib/stats/wire.ts";
import {
  COMPARE_PRESETS,
  type ComparePreset,
  DEFAULT_LIMIT,
  type DimensionName,
  type Direction,
  DIRECTIONS,
  type EventDimension,
  FIXED_DIMENSIONS,
  MAX_DIMENSIONS,
  MAX_LIMIT,
  MAX_OFFSET,
  MAX_SEGMENT_FILTERS,
  type MetricName,
  METRICS,
  type Operator,
  OPERATORS,
  type Preset,
  PRESETS,
  PROPS_PREFIX,
  type PropsDimension,
  QUERY_INCLUDE,
  type QueryField,
  REALTIME_PRESETS,
  type RealtimePreset,
  SEGMENT_FILTER,
  type TimeDimension,
  type VisitDimension,
} from "../../lib/stats/vocabulary.ts";
import { ianaTimeZone } from "../../lib/formats.ts";
import { isJsonObject } from "../../lib/json.ts";
import { type Grain, parseDay } from "./calendar.ts";

export type {
  ComparePreset,
  DimensionName,
  EventDimension,
  MetricName,
  Operator,
  Preset,
  PropsDimension,
  RealtimePreset,
  TimeDimension,
  VisitDimension,
};

export interface Filter {
  operator: Operator;
  /** A dimension, or "segment" for the filter of saved segments (values: their ids). */
  dimension: VisitDimension | EventDimension | typeof SEGMENT;
  values: string[];
  /** For "segment": each segment's filters, in the order of `values`. */
  segments?: Filter[][];
}

/** The filter `["is" | "is_not", "segment", [ID, ...]]`. */
export const SEGMENT = SEGMENT_FILTER;

export interface Order {
  by: MetricName | DimensionName;
  direction: Direction;
}

export type Days = { first: string; last: string };
export type DateRangeQuery = { preset: Preset } | Days;
export type CompareQuery = { preset: ComparePreset } | Days;

export interface StatsQuery {
  metrics: MetricName[];
  dateRange: DateRangeQuery;
  dimensions: DimensionName[];
  filters: Filter[];
  /** The ordering asked for, or the default one when none was. */
  orderBy: Order[];
  includeTotals: boolean;
  includeBots: boolean;
  includeTimeLabels: boolean;
  /** include.compare, when asked for. */
  compare?: CompareQuery;
  limit: number;
  offset: number;
  /** As sent (letter case made the zone's own), when sent. */
  timeZone?: string;
}

/** What the rules need to know of the site. */
export interface SiteFacts {
  /** The parameter keys declared by any of the site's event types. */
  paramKeys: ReadonlySet<string>;
  /**
   * The stored filters (as saved) of the segments a body names, by id; a
   * segment filter naming an id not here is refused.
   */
  segments?: ReadonlyMap<string, Json>;
}

export { MAX_SEGMENT_FILTERS };

/** What a segment's filters may name: visit: and event: dimensions. */
export const segmentFilterAllowed = (d: DimensionName) =>
  isTimeDimension(d) ? `${d} cannot be filtered; date_range chooses the days` : undefined;

/** A segment's filters at `field`: 1 to 10 query filters on visit: and event: dimensions. */
export function segmentFilters(value: Json | undefined, site: SiteFacts, field: string): Filter[] {
  const items = list(value, field, "[operator, dimension, values]");
  if (!items || items.length < 1 || items.length > MAX_SEGMENT_FILTERS) {
    throw new QueryError(field, `must be a list of 1 to ${MAX_SEGMENT_FILTERS} filters`);
  }
  const inner: SiteFacts = { paramKeys: site.paramKeys };
  return filters(items, inner, segmentFilterAllowed, field);
}

/** The segment filter at `at`: is or is_not, and ids of the site's segments. */
function segmentFilter(operator: Operator, values: Json, site: SiteFacts, at: string): Filter {
  if (operator !== "is" && operator !== "is_not") {
    throw new QueryError(at, 'a segment filter takes "is" or "is_not"');
  }
  if (
    !Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")
  ) {
    throw new QueryError(at, "values must be a non-empty list of segment ids");
  }
  const ids = values as string[];
  const segments = ids.map((id) => {
    const stored = site.segments?.get(id);
    if (stored === undefined) throw new QueryError(at, `unknown segment "${id}"`);
    try {
      return segmentFilters(stored, site, "filters");
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      throw new QueryError(at, `segment "${id}" no longer holds: ${error.problem}`);
    }
  });
  return { operator, dimension: SEGMENT, values: ids, segments };
}

/** The body field at fault, with a path after it when a part of it is, and what is wrong. */
export class QueryError extends Error {
  override name = "QueryError";
  constructor(readonly field: string, readonly problem: string) {
    super(`${field}: ${problem}`);
  }
}

export const isTimeDimension = (d: string): d is TimeDimension => d.startsWith("time:");
export const isVisitDimension = (d: string): d is VisitDimension => d.startsWith("visit:");
export const isEventDimension = (d: string): d is EventDimension => d.startsWith("event:");
export const isPropsDimension = (d: string): d is PropsDimension => d.startsWith(PROPS_PREFIX);
export const propertyKeyOf = (d: PropsDimension) => d.slice(PROPS_PREFIX.length);
export const grainOf = (d: TimeDimension): Grain => d.slice(5) as Grain;
export const isRealtime = (range: DateRangeQuery): range is { preset: RealtimePreset } =>
  "preset" in range && (REALTIME_PRESETS as readonly string[]).includes(range.preset);

export function oneOfText(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names[0];
}

export function named<T extends string>(
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

export function list(value: Json | undefined, field: string, what: string): Json[] | undefined {
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
    const name = named(item, METRICS, `metrics[${i}]`, "metric");
    if (seen.has(name)) throw new QueryError(`metrics[${i}]`, `"${name}" is repeated`);
    seen.add(name);
    return name;
  });
}

/** Two days "YYYY-MM-DD", first not after last, at `field`. */
function days(value: Json, field: string, shapes: string): Days {
  if (!Array.isArray(value) || value.length !== 2) throw new QueryError(field, `must be ${shapes}`);
  const parsed = value.map((day, i) => {
    const date = typeof day === "string" ? parseDay(day) : undefined;
    if (!date) throw new QueryError(`${field}[${i}]`, "must be a date written YYYY-MM-DD");
    return date;
  });
  if (Temporal.PlainDate.compare(parsed[0], parsed[1]) > 0) {
    throw new QueryError(field, "the first day must not be after the last");
  }
  return { first: parsed[0].toString(), last: parsed[1].toString() };
}

export function dateRange(value: Json | undefined): DateRangeQuery {
  const shapes = `${oneOfText(PRESETS.map((p) => `"${p}"`))}, or ["YYYY-MM-DD", "YYYY-MM-DD"]`;
  if (value === undefined || value === null) {
    throw new QueryError("date_range", `is required: ${shapes}`);
  }
  if (typeof value === "string") {
    if ((PRESETS as readonly string[]).includes(value)) return { preset: value as Preset };
    throw new QueryError("date_range", `unknown range "${value}"; ${shapes}`);
  }
  return days(value, "date_range", shapes);
}

/** A dimension name at `field`: one of the fixed names, or event:props:KEY of a declared key. */
function dimensionName(value: Json, field: string, site: SiteFacts): DimensionName {
  if (typeof value === "string" && isPropsDimension(value)) {
    const key = propertyKeyOf(value);
    if (!site.paramKeys.has(key)) {
      throw new QueryError(
        field,
        `"${key}" is not a parameter declared by any of the site's event types`,
      );
    }
    return value;
  }
  return named(
    value,
    [...FIXED_DIMENSIONS, `${PROPS_PREFIX}KEY`],
    field,
    "dimension",
  ) as DimensionName;
}

/** At most one local day: the ranges time:minute may break down. */
function oneDayAtMost(range: DateRangeQuery): boolean {
  if ("first" in range) return range.first === range.last;
  return ["today", "yesterday", ...REALTIME_PRESETS].includes(range.preset);
}

function dimensions(value: Json | undefined, range: DateRangeQuery, site: SiteFacts) {
  const items = list(value, "dimensions", "dimension names");
  if (!items) return [];
  if (items.length > MAX_DIMENSIONS) {
    throw new QueryError("dimensions", `must name at most ${MAX_DIMENSIONS} dimensions`);
  }
  const seen = new Set<string>();
  return items.map((item, i) => {
    const name = dimensionName(item, `dimensions[${i}]`, site);
    if (seen.has(name)) throw new QueryError(`dimensions[${i}]`, `"${name}" is repeated`);
    seen.add(name);
    if (name === "time:minute" && !oneDayAtMost(range)) {
      throw new QueryError(
        "dimensions",
        'time:minute needs a range of at most one day ("30m", "5m", "today", "yesterday" or one day)',
      );
    }
    return name;
  });
}

/**
 * A list of [operator, dimension, values] at `field`; `allow` says which
 * dimensions may be filtered (a refusal names why).
 */
export function filters(
  value: Json | undefined,
  site: SiteFacts,
  allow: (d: DimensionName) => string | undefined,
  field = "filters",
): Filter[] {
  const items = list(value, field, "[operator, dimension, values]");
  if (!items) return [];
  return items.map((item, i) => {
    const at = `${field}[${i}]`;
    if (!Array.isArray(item) || item.length !== 3) {
      throw new QueryError(at, "must be [operator, dimension, values]");
    }
    const [op, dim, values] = item;
    const operator = named(op, OPERATORS, at, "operator");
    if (dim === SEGMENT && site.segments !== undefined) {
      return segmentFilter(operator, values, site, at);
    }
    const dimension = dimensionName(dim, at, site);
    const refusal = allow(dimension);
    if (refusal) throw new QueryError(at, refusal);
    if (
      !Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")
    ) {
      throw new QueryError(at, "values must be a non-empty list of strings");
    }
    if ((values as string[]).some((v) => v.includes("\u0000"))) {
      throw new QueryError(at, "values must not contain the NUL character");
    }
    return { operator, dimension: dimension as Filter["dimension"], values: values as string[] };
  });
}

const notTime = (d: DimensionName) =>
  isTimeDimension(d) ? `${d} cannot be filtered; date_range chooses the days` : undefined;

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
    if (!(DIRECTIONS as readonly Json[]).includes(direction)) {
      throw new QueryError(field, 'the direction must be "asc" or "desc"');
    }
    return { by: name as MetricName | DimensionName, direction: direction as Direction };
  });
}

/** Time dimensions ascending, then the first metric descending. */
export function defaultOrder(query: Pick<StatsQuery, "metrics" | "dimensions">): Order[] {
  return [
    ...query.dimensions.filter(isTimeDimension).map((by) => ({ by, direction: "asc" as const })),
    { by: query.metrics[0], direction: "desc" },
  ];
}

export function flag(value: Json | undefined, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw new QueryError(field, "must be true or false");
  return value;
}

/** The include object's members, refusing any it does not know. */
export function includeMembers(
  value: Json | undefined,
  known: readonly string[],
): Record<string, Json> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject<Json>(value)) {
    throw new QueryError("include", `must be an object of ${oneOfText(known)}`);
  }
  for (const member of Object.keys(value)) {
    if (!known.includes(member)) {
      throw new QueryError(
        "include",
        `unknown member "${member}"; include may hold ${oneOfText(known)}`,
      );
    }
  }
  return value;
}

function compare(value: Json | undefined, range: DateRangeQuery): CompareQuery | undefined {
  if (value === undefined || value === null) return undefined;
  const shapes = `${
    oneOfText(COMPARE_PRESETS.map((p) => `"${p}"`))
  }, or ["YYYY-MM-DD", "YYYY-MM-DD"]`;
  let parsed: CompareQuery;
  if (typeof value === "string") {
    if (!(COMPARE_PRESETS as readonly string[]).includes(value)) {
      throw new QueryError("include.compare", `unknown comparison "${value}"; ${shapes}`);
    }
    parsed = { preset: value as ComparePreset };
  } else {
    parsed = days(value, "include.compare", shapes);
  }
  if ("preset" in range && range.preset === "all") {
    throw new QueryError("include", 'a comparison needs a range other than "all"');
  }
  if ("first" in parsed && isRealtime(range)) {
    throw new QueryError("include.compare", "a realtime range compares with a preset only");
  }
  return parsed;
}

export function integer(
  value: Json | undefined,
  field: string,
  bounds: { fallback: number; min: number; max: number },
): number {
  if (value === undefined || value === null) return bounds.fallback;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < bounds.min ||
    value > bounds.max
  ) {
    throw new QueryError(field, `must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}

export function timeZone(value: Json | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const zone = typeof value === "string" ? ianaTimeZone(value) : undefined;
  if (zone === undefined) {
    throw new QueryError("time_zone", "must be an IANA time zone name such as Europe/Berlin");
  }
  return zone;
}

/** The query a body asks for, defaults filled in; throws QueryError at the first fault. */
export function parseQuery(
  body: Partial<Record<QueryField, Json>>,
  site: SiteFacts = { paramKeys: new Set() },
): StatsQuery {
  const metricList = metrics(body.metrics);
  const range = dateRange(body.date_range);
  const dimensionList = dimensions(body.dimensions, range, site);
  const filterList = filters(body.filters, site, notTime);
  const conversion = metricList.indexOf("conversion_rate");
  if (conversion >= 0 && !filterList.some((f) => f.dimension === "event:name")) {
    throw new QueryError(
      `metrics[${conversion}]`,
      "conversion_rate needs an event:name filter naming the conversion",
    );
  }
  const order = orderBy(body.order_by, { metrics: metricList, dimensions: dimensionList });
  const included = includeMembers(body.include, QUERY_INCLUDE);
  const totals = flag(included.totals, "include.totals");
  const bots = flag(included.bots, "include.bots");
  const timeLabels = flag(included.time_labels, "include.time_labels");
  if (timeLabels && !dimensionList.some(isTimeDimension)) {
    throw new QueryError("include", "time_labels needs a time dimension");
  }
  const compared = compare(included.compare, range);
  const limit = integer(body.limit, "limit", { fallback: DEFAULT_LIMIT, min: 1, max: MAX_LIMIT });
  const offset = integer(body.offset, "offset", { fallback: 0, min: 0, max: MAX_OFFSET });
  const zone = timeZone(body.time_zone);
  return {
    metrics: metricList,
    dateRange: range,
    dimensions: dimensionList,
    filters: filterList,
    orderBy: order,
    includeTotals: totals,
    includeBots: bots,
    includeTimeLabels: timeLabels,
    ...(compared === undefined ? {} : { compare: compared }),
    limit,
    offset,
    ...(zone === undefined ? {} : { timeZone: zone }),
  };
}
