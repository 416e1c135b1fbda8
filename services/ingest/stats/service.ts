/**
 * crm.stats.v1.StatsService: a reports query from its body to its typed
 * answer. The steps: read the query (the first fault refused as
 * invalid_query), find the site's zone (the query's time_zone only while the
 * site has none, else UTC), turn the date range into local days and
 * instants, build the buckets of the time dimensions, let the engine sum,
 * and finish.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type MetricValue,
  type Query,
  QueryResponseSchema,
  type StatsService,
} from "../../lib/gen/crm/stats/v1/stats_pb.ts";
import { Code, fieldProblem, publicError, siteNotFound } from "../../lib/errors.ts";
import { queryMembersOf } from "../../lib/stats/wire.ts";
import {
  DIMENSIONS,
  DIRECTIONS,
  METRICS,
  OPERATORS,
  PRESETS as PRESET_ENUMS,
} from "../../lib/stats/names.ts";
import { bucketsOf, localDay, parseDay, startOfDay } from "./calendar.ts";
import { type Answer, finish, type MetricAnswer } from "./finish.ts";
import type { Partials, Plan } from "./plan.ts";
import {
  type DimensionName,
  grainOf,
  isTimeDimension,
  type MetricName,
  parseQuery,
  QueryError,
  type StatsQuery,
  type TimeDimension,
} from "./query.ts";

export interface Extent {
  first: number;
  last: number;
}

/** How an engine reads the stored data. */
export interface StatsEngine {
  /** The first and last time of the rows a query counts in [from, to) (unbounded where undefined). */
  extent(
    siteId: string,
    range: { from?: number; to?: number },
    includeBots: boolean,
  ): Promise<Extent | undefined>;
  partials(plan: Plan): Promise<Partials>;
}

export interface StatsDeps {
  engine: StatsEngine;
  /** The site's own zone (null when it has none), or undefined when the site is unknown. */
  siteTimeZone(siteId: string): Promise<string | null | undefined>;
  now: () => number;
}

export interface ResolvedRange {
  firstDay: Temporal.PlainDate;
  lastDay: Temporal.PlainDate;
}

/** The local days a range covers; "all" starts on the first day with data (or today). */
export function resolveDays(
  range: StatsQuery["dateRange"],
  today: Temporal.PlainDate,
  firstDataDay: () => Promise<Temporal.PlainDate | undefined>,
): Promise<ResolvedRange> | ResolvedRange {
  if ("first" in range) return { firstDay: parseDay(range.first)!, lastDay: parseDay(range.last)! };
  switch (range.preset) {
    case "today":
      return { firstDay: today, lastDay: today };
    case "yesterday": {
      const day = today.subtract({ days: 1 });
      return { firstDay: day, lastDay: day };
    }
    case "7d":
      return { firstDay: today.subtract({ days: 6 }), lastDay: today };
    case "30d":
      return { firstDay: today.subtract({ days: 29 }), lastDay: today };
    case "month":
      return { firstDay: today.with({ day: 1 }), lastDay: today };
    case "year":
      return { firstDay: today.with({ month: 1, day: 1 }), lastDay: today };
    case "all":
      return firstDataDay().then((first) => ({
        firstDay: first && Temporal.PlainDate.compare(first, today) < 0 ? first : today,
        lastDay: today,
      }));
  }
}

/** The plan of a query over resolved days. */
export async function planQuery(
  engine: StatsEngine,
  siteId: string,
  query: StatsQuery,
  zone: string,
  days: ResolvedRange,
): Promise<Plan> {
  const startMs = startOfDay(days.firstDay, zone);
  const endMs = startOfDay(days.lastDay.add({ days: 1 }), zone);
  const buckets = new Map();
  const times = query.dimensions.filter(isTimeDimension);
  if (times.length > 0) {
    // Buckets only where data is: a range of decades must not make a bucket of every hour.
    const extent = await engine.extent(siteId, { from: startMs, to: endMs }, query.includeBots);
    const from = extent ? Math.max(startMs, extent.first) : startMs;
    const to = extent ? Math.min(endMs, extent.last + 1) : startMs + 1;
    for (const d of times) buckets.set(d, bucketsOf(grainOf(d), zone, from, to));
  }
  return { siteId, query, zone, startMs, endMs, buckets };
}

function metricMessage(value: MetricAnswer) {
  return typeof value === "number" ? { value: { case: "number" as const, value } } : {
    value: {
      case: "amounts" as const,
      value: { minorUnits: Object.fromEntries(value) },
    },
  };
}

/** The query as understood, as crm.stats.v1.Query. */
export function queryMessage(query: StatsQuery) {
  const dimension = (d: DimensionName) => DIMENSIONS.get(d)!;
  const range = "first" in query.dateRange
    ? { case: "days" as const, value: { first: query.dateRange.first, last: query.dateRange.last } }
    : { case: "preset" as const, value: PRESET_ENUMS.get(query.dateRange.preset)! };
  return {
    metrics: query.metrics.map((m) => METRICS.get(m)!),
    dateRange: { range },
    dimensions: query.dimensions.map(dimension),
    filters: query.filters.map((f) => ({
      operator: OPERATORS.get(f.operator)!,
      dimension: dimension(f.dimension),
      values: f.values,
    })),
    orderBy: query.orderBy.map((o) => ({
      by: METRICS.has(o.by)
        ? { case: "metric" as const, value: METRICS.get(o.by)! }
        : { case: "dimension" as const, value: dimension(o.by as DimensionName) },
      direction: DIRECTIONS.get(o.direction)!,
    })),
    includeTotals: query.includeTotals,
    includeBots: query.includeBots,
    limit: query.limit,
    offset: query.offset,
    timeZone: query.timeZone,
  } satisfies Partial<Record<keyof Query, unknown>>;
}

export function responseOf(
  query: StatsQuery,
  zone: string,
  days: ResolvedRange,
  answer: Answer,
) {
  return create(QueryResponseSchema, {
    results: answer.rows.map((row) => ({
      dimensions: row.dims.map((value) => (value === null ? {} : { value })),
      metrics: row.metrics.map(metricMessage) as MetricValue[],
    })),
    totals: answer.totals ? { metrics: answer.totals.map(metricMessage) } : undefined,
    meta: {
      timeZone: zone,
      firstDay: days.firstDay.toString(),
      lastDay: days.lastDay.toString(),
      totalRows: BigInt(answer.totalRows),
    },
    query: queryMessage(query),
  });
}

function readQuery(body: Parameters<typeof queryMembersOf>[0]): StatsQuery {
  try {
    return parseQuery(queryMembersOf(body));
  } catch (error) {
    if (error instanceof QueryError) {
      throw publicError(
        Code.InvalidArgument,
        "invalid_query",
        fieldProblem(error.field, error.problem),
      );
    }
    throw error;
  }
}

export function statsHandlers(deps: StatsDeps): ServiceImpl<typeof StatsService> {
  return {
    async query({ siteId, body }) {
      const query = readQuery(body);
      const own = await deps.siteTimeZone(siteId);
      if (own === undefined) {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      }
      const zone = own ?? query.timeZone ?? "UTC";
      const today = localDay(deps.now(), zone);
      const days = await resolveDays(query.dateRange, today, async () => {
        const extent = await deps.engine.extent(siteId, {}, query.includeBots);
        return extent && localDay(extent.first, zone);
      });
      const plan = await planQuery(deps.engine, siteId, query, zone, days);
      const answer = finish(query, await deps.engine.partials(plan));
      return responseOf(query, zone, days, answer);
    },
  };
}

export type { MetricName, TimeDimension };
