/**
 * crm.stats.v1.StatsService: a reports query or a funnel from its body to
 * its typed answer. The steps: read the body (the first fault refused as
 * invalid_query), find the zone (the site's own; the query's time_zone only
 * while the site has none; else UTC), resolve the range to local days and
 * instants, build the buckets of the time dimensions, let the engine sum,
 * finish, and with include.compare do the same over the compared range.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  FunnelResponseSchema,
  type FunnelStep as FunnelStepMessage,
  type MetricValue,
  type Query,
  QueryResponseSchema,
  type StatsService,
} from "../../lib/gen/crm/stats/v1/stats_pb.ts";
import { Code, fieldProblem, publicError, siteNotFound } from "../../lib/errors.ts";
import { funnelMembersOf, queryMembersOf } from "../../lib/stats/wire.ts";
import {
  COMPARE_PRESET_ENUM,
  DIRECTION_ENUM,
  METRIC_ENUM,
  OPERATOR_ENUM,
  PRESET_ENUM,
  queryDimensionOf,
} from "../../lib/stats/names.ts";
import { MAX_LIMIT, type MetricName } from "../../lib/stats/vocabulary.ts";
import { bucketsOf, localDay } from "./calendar.ts";
import { type Answer, finish, type MetricAnswer, roundHalfUp } from "./finish.ts";
import { type ChangeAnswer, compareRows, compareTotals, type Comparison } from "./compare.ts";
import type { Partials, Plan } from "./plan.ts";
import {
  type DimensionName,
  grainOf,
  isTimeDimension,
  parseQuery,
  QueryError,
  type SiteFacts,
  type StatsQuery,
  type TimeDimension,
} from "./query.ts";
import { comparedRange, localTimeText, type ResolvedRange, resolveRange } from "./ranges.ts";
import { type FunnelQuery, parseFunnel, type Step } from "./funnel_query.ts";
import type { FunnelAnswer } from "./funnel.ts";
import { siteAnswer, type SiteDeclarations } from "../site_declarations.ts";
import { expandSegments, segmentIdsOf } from "./segments.ts";
import type { Json } from "../../lib/stats/wire.ts";

/** How an engine reads the stored data. */
export interface StatsEngine {
  /** The first and last time of the rows a query counts in [from, to) (unbounded where undefined). */
  extent(
    siteId: string,
    range: { from?: number; to?: number },
    includeBots: boolean,
  ): Promise<{ first: number; last: number } | undefined>;
  partials(plan: Plan): Promise<Partials>;
  funnel(plan: FunnelPlan): Promise<FunnelAnswer>;
}

/** A funnel ready to run: the site, the query and its instants. */
export interface FunnelPlan {
  siteId: string;
  query: FunnelQuery;
  startMs: number;
  endMs: number;
}

/** What the service knows of a site: its own zone (null without one) and declared parameters. */
export interface SiteOfStats extends SiteFacts {
  timeZone: string | null;
  /** The names of the site's declared event types. */
  eventNames: ReadonlySet<string>;
}

export interface StatsDeps {
  engine: StatsEngine;
  /** The site, or undefined when it is unknown. */
  site(siteId: string): Promise<SiteOfStats | undefined>;
  /** The stored filters of those of `ids` that are the site's segments. */
  segments?(siteId: string, ids: string[]): Promise<ReadonlyMap<string, Json>>;
  now: () => number;
}

/** The query with its segment filters put as plain filters where that is exact: what runs. */
const runnable = <Q extends { filters: StatsQuery["filters"] }>(query: Q): Q => ({
  ...query,
  filters: expandSegments(query.filters),
});

/** The plan of a query over a resolved range. */
export async function planQuery(
  engine: StatsEngine,
  siteId: string,
  query: StatsQuery,
  zone: string,
  range: ResolvedRange,
): Promise<Plan> {
  const { startMs, endMs } = range;
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

/** Every label of each of the query's time dimensions over the whole range, in order. */
export function rangeLabels(
  query: StatsQuery,
  zone: string,
  range: ResolvedRange,
): Map<TimeDimension, string[]> {
  const labelsOf = (d: TimeDimension) => bucketsOf(grainOf(d), zone, range.startMs, range.endMs);
  return new Map(query.dimensions.filter(isTimeDimension).map((d) => [d, labelsOf(d).labels]));
}

function metricMessage(value: MetricAnswer) {
  return typeof value === "number" ? { value: { case: "number" as const, value } } : {
    value: {
      case: "amounts" as const,
      value: { minorUnits: Object.fromEntries(value) },
    },
  };
}

function changeMessage(change: ChangeAnswer) {
  if (change === null) return {};
  if (typeof change === "number") return { value: { case: "number" as const, value: change } };
  return {
    value: {
      case: "currencies" as const,
      value: {
        percent: Object.fromEntries(
          [...change].map(([c, v]) => [c, v === null ? {} : { value: v }]),
        ),
      },
    },
  };
}

function comparisonMessage(comparison: Comparison) {
  return {
    dimensions: comparison.dims.map((value) => (value === null ? {} : { value })),
    metrics: comparison.metrics.map(metricMessage) as MetricValue[],
    change: comparison.change.map(changeMessage),
  };
}

/** The query as understood, as crm.stats.v1.Query. */
export function queryMessage(query: StatsQuery) {
  const range = "first" in query.dateRange
    ? { case: "days" as const, value: { first: query.dateRange.first, last: query.dateRange.last } }
    : { case: "preset" as const, value: PRESET_ENUM[query.dateRange.preset] };
  const compare = query.compare === undefined ? undefined : {
    with: "first" in query.compare
      ? { case: "days" as const, value: query.compare }
      : { case: "preset" as const, value: COMPARE_PRESET_ENUM[query.compare.preset] },
  };
  return {
    metrics: query.metrics.map((m) => METRIC_ENUM[m]),
    dateRange: { range },
    queryDimensions: query.dimensions.map(queryDimensionOf),
    filters: query.filters.map((f) => ({
      operator: OPERATOR_ENUM[f.operator],
      queryDimension: queryDimensionOf(f.dimension),
      values: f.values,
    })),
    orderBy: query.orderBy.map((o) => ({
      by: Object.hasOwn(METRIC_ENUM, o.by)
        ? { case: "metric" as const, value: METRIC_ENUM[o.by as MetricName] }
        : { case: "queryDimension" as const, value: queryDimensionOf(o.by as DimensionName) },
      direction: DIRECTION_ENUM[o.direction],
    })),
    includeTotals: query.includeTotals,
    includeBots: query.includeBots,
    includeTimeLabels: query.includeTimeLabels,
    compare,
    limit: query.limit,
    offset: query.offset,
    timeZone: query.timeZone,
  } satisfies Partial<Record<keyof Query, unknown>>;
}

/** The answer and, with include.compare, what it is compared with. */
export interface Answered {
  query: StatsQuery;
  zone: string;
  range: ResolvedRange;
  answer: Answer;
  timeLabels?: string[];
  compared?: {
    range: ResolvedRange;
    rows: (Comparison | null)[];
    totals?: Comparison;
  };
}

function rangeMessage(range: ResolvedRange, zone: string) {
  return range.realtime
    ? {
      case: "times" as const,
      value: { first: localTimeText(range.startMs, zone), last: localTimeText(range.endMs, zone) },
    }
    : {
      case: "days" as const,
      value: { first: range.firstDay.toString(), last: range.lastDay.toString() },
    };
}

export function responseOf(answered: Answered) {
  const { query, zone, range, answer, compared } = answered;
  return create(QueryResponseSchema, {
    results: answer.rows.map((row, i) => {
      const comparison = compared?.rows[i];
      return {
        dimensions: row.dims.map((value) => (value === null ? {} : { value })),
        metrics: row.metrics.map(metricMessage) as MetricValue[],
        comparison: comparison ? comparisonMessage(comparison) : undefined,
      };
    }),
    totals: answer.totals ? { metrics: answer.totals.map(metricMessage) } : undefined,
    totalsComparison: compared?.totals ? comparisonMessage(compared.totals) : undefined,
    meta: {
      timeZone: zone,
      firstDay: range.firstDay.toString(),
      lastDay: range.lastDay.toString(),
      totalRows: BigInt(answer.totalRows),
      timeLabels: answered.timeLabels ?? [],
      comparedRange: compared ? { range: rangeMessage(compared.range, zone) } : undefined,
    },
    query: queryMessage(query),
  });
}

/** A QueryError as the public invalid_query refusal. */
export function refused<T>(read: () => T): T {
  try {
    return read();
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

function stepMessage(step: Step): FunnelStepMessage["match"] {
  if ("page" in step) return { case: "page", value: step.page };
  if ("event" in step) return { case: "event", value: step.event };
  return { case: "lead", value: true };
}

/** Answers queries and funnels with `deps`. */
export class StatsAnswerer {
  constructor(private readonly deps: StatsDeps) {}

  async #site(siteId: string): Promise<SiteOfStats> {
    const site = await this.deps.site(siteId);
    if (!site) throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
    return site;
  }

  #range(siteId: string, query: Pick<StatsQuery, "dateRange" | "includeBots">, zone: string) {
    return resolveRange(query.dateRange, zone, this.deps.now(), async () => {
      return (await this.deps.engine.extent(siteId, {}, query.includeBots))?.first;
    });
  }

  /** The site with the segments a body's filters name. */
  async #facts(siteId: string, site: SiteOfStats, filters: Json | undefined) {
    const ids = segmentIdsOf(filters);
    const segments = ids.length > 0 && this.deps.segments
      ? await this.deps.segments(siteId, ids)
      : new Map<string, Json>();
    return { ...site, segments };
  }

  /** The answer of one query over one range. */
  async #answer(siteId: string, query: StatsQuery, zone: string, range: ResolvedRange) {
    const run = runnable(query);
    const plan = await planQuery(this.deps.engine, siteId, run, zone, range);
    return finish(run, await this.deps.engine.partials(plan));
  }

  async query(siteId: string, body: Parameters<typeof queryMembersOf>[0]): Promise<Answered> {
    const members = queryMembersOf(body);
    const site = await this.#facts(siteId, await this.#site(siteId), members.filters);
    const query = refused(() => parseQuery(members, site));
    const zone = site.timeZone ?? query.timeZone ?? "UTC";
    const range = await this.#range(siteId, query, zone);
    const answered: Answered = {
      query,
      zone,
      range,
      answer: await this.#answer(siteId, query, zone, range),
    };
    const labels = query.includeTimeLabels || query.compare
      ? rangeLabels(query, zone, range)
      : undefined;
    if (query.includeTimeLabels) {
      answered.timeLabels = labels!.get(query.dimensions.find(isTimeDimension)!)!;
    }
    if (query.compare) {
      const other = comparedRange(query.compare, range, zone);
      const all = { ...query, limit: MAX_LIMIT, offset: 0 };
      const before = await this.#answer(siteId, all, zone, other);
      const compared = {
        range: other,
        rows: compareRows(query, answered.answer.rows, before.allRows, {
          range: labels!,
          compared: rangeLabels(query, zone, other),
        }),
        totals: answered.answer.totals && before.totals
          ? compareTotals(query, answered.answer.totals, before.totals)
          : undefined,
      };
      answered.compared = compared;
    }
    return answered;
  }

  /**
   * A query over the instants [startMs, endMs) rather than its date range:
   * a window no preset names (a traffic alert's last 12 hours), counted as
   * the realtime ranges count theirs.
   */
  async window(
    siteId: string,
    body: Parameters<typeof queryMembersOf>[0],
    { startMs, endMs }: { startMs: number; endMs: number },
  ): Promise<Answer> {
    const site = await this.#site(siteId);
    const query = refused(() => parseQuery(queryMembersOf(body), site));
    const zone = site.timeZone ?? query.timeZone ?? "UTC";
    const range: ResolvedRange = {
      firstDay: localDay(startMs, zone),
      lastDay: localDay(Math.max(startMs, endMs - 1), zone),
      startMs,
      endMs,
      realtime: true,
    };
    return await this.#answer(siteId, query, zone, range);
  }

  async funnel(siteId: string, body: Parameters<typeof funnelMembersOf>[0]) {
    const members = funnelMembersOf(body);
    const site = await this.#facts(siteId, await this.#site(siteId), members.filters);
    const query = refused(() => parseFunnel(members, site));
    const zone = site.timeZone ?? query.timeZone ?? "UTC";
    const range = await this.#range(siteId, query, zone);
    const answer = await this.deps.engine.funnel({
      siteId,
      query: runnable(query),
      startMs: range.startMs,
      endMs: range.endMs,
    });
    const first = answer.steps[0]?.visitors ?? 0;
    return create(FunnelResponseSchema, {
      steps: query.steps.map((step, i) => {
        const reached = answer.steps[i];
        const previous = i === 0 ? reached.visitors : answer.steps[i - 1].visitors;
        return {
          step: { match: stepMessage(step) },
          visitors: BigInt(reached.visitors),
          visits: BigInt(reached.visits),
          conversionRate: first === 0 ? 0 : roundHalfUp(1000 * reached.visitors, first) / 10,
          dropOff: BigInt(previous - reached.visitors),
        };
      }),
      meta: {
        timeZone: zone,
        firstDay: range.firstDay.toString(),
        lastDay: range.lastDay.toString(),
      },
    });
  }
}

/**
 * Runs fn with what answers one call: an answerer and the site's
 * declarations, reading one snapshot (ReportReads.run gives it).
 */
export type Answering = <T>(
  fn: (answerer: StatsAnswerer, declarations: SiteDeclarations) => Promise<T>,
) => Promise<T>;

/** The service's calls: queries, funnels and the Site call, each answered within `answering`. */
export function statsHandlers(
  answering: Answering,
): Pick<ServiceImpl<typeof StatsService>, "query" | "funnel" | "site"> {
  return {
    query({ siteId, body }) {
      return answering(async (answerer) => responseOf(await answerer.query(siteId, body)));
    },
    funnel({ siteId, body }) {
      return answering((answerer) => answerer.funnel(siteId, body));
    },
    site({ siteId }) {
      return answering((_, declarations) => siteAnswer(declarations, siteId));
    },
  };
}
