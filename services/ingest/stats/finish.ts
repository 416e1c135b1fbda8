/**
 * From an engine's partial sums to the answer: each metric's value (rates
 * rounded half up, one decimal; views per visit two; durations whole
 * seconds), the order (the query's, then every dimension ascending, so equal
 * keys never leave the order to chance), limit and offset. Pure.
 */
import { compareLabels } from "./calendar.ts";
import {
  type DimensionName,
  grainOf,
  isTimeDimension,
  type MetricName,
  type StatsQuery,
} from "./query.ts";
import type { Group, Partials, Sums } from "./plan.ts";

export type MetricAnswer = number | Map<string, bigint>;

export interface AnswerRow {
  dims: (string | null)[];
  metrics: MetricAnswer[];
}

export interface Answer {
  /** The page of rows limit and offset ask for. */
  rows: AnswerRow[];
  /** Every row, in order (what comparisons match against). */
  allRows: AnswerRow[];
  totals?: MetricAnswer[];
  totalRows: number;
}

/** n / d rounded half up (towards +infinity at one half), for d > 0; exact for integers of any size. */
export function divideHalfUp(n: bigint, d: bigint): bigint {
  const twice = 2n * n + d;
  const q = twice / (2n * d);
  return twice < 0n && q * 2n * d !== twice ? q - 1n : q;
}

/** n / d rounded half up, for d > 0 (exact for integers of any size). */
export function roundHalfUp(n: number, d: number): number {
  return Number(divideHalfUp(BigInt(Math.round(n)), BigInt(Math.round(d))));
}

export function metricValue(metric: MetricName, s: Sums): MetricAnswer {
  switch (metric) {
    case "pageviews":
      return s.pageviews;
    case "visits":
      return s.visits;
    case "visitors":
      return s.visitors;
    case "events":
      return s.events;
    case "leads":
      return s.leads;
    case "revenue":
      return new Map(s.revenue);
    case "bounce_rate":
      return s.visits ? roundHalfUp(1000 * s.bounces, s.visits) / 10 : 0;
    case "visit_duration":
      return s.visits ? roundHalfUp(s.durationMs, 1000 * s.visits) : 0;
    case "views_per_visit":
      return s.visits ? roundHalfUp(100 * s.visitPageviews, s.visits) / 100 : 0;
    case "conversion_rate":
      return s.reached ? roundHalfUp(1000 * s.converted, s.reached) / 10 : 0;
  }
}

type Compare<T> = (a: T, b: T) => number;

/** Strings in code unit order, null after every value. */
function compareText(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function dimensionCompare(d: DimensionName): Compare<string | null> {
  if (!isTimeDimension(d)) return compareText;
  const grain = grainOf(d);
  return (a, b) => (a === null || b === null ? compareText(a, b) : compareLabels(grain, a, b));
}

/** Revenue compared currency by currency, in code order over every currency of the answer. */
function revenueCompare(currencies: string[]): Compare<Map<string, bigint>> {
  return (a, b) => {
    for (const c of currencies) {
      const x = a.get(c) ?? 0n;
      const y = b.get(c) ?? 0n;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}

export function finish(query: StatsQuery, partials: Partials): Answer {
  const values = (s: Sums) => query.metrics.map((m) => metricValue(m, s));
  const groups: Group[] = query.dimensions.length === 0
    ? [{ dims: [], sums: partials.all }]
    : partials.groups;
  const rows: AnswerRow[] = groups.map((g) => ({ dims: g.dims, metrics: values(g.sums) }));
  const currencies = [
    ...new Set(groups.flatMap((g) => [...g.sums.revenue.keys()])),
  ].sort();
  const keys: Compare<AnswerRow>[] = [];
  for (const order of query.orderBy) {
    const sign = order.direction === "desc" ? -1 : 1;
    const metricIndex = query.metrics.indexOf(order.by as MetricName);
    if (metricIndex >= 0) {
      const byRevenue = revenueCompare(currencies);
      keys.push((a, b) => {
        const x = a.metrics[metricIndex];
        const y = b.metrics[metricIndex];
        const c = typeof x === "number" && typeof y === "number"
          ? x - y
          : byRevenue(x as Map<string, bigint>, y as Map<string, bigint>);
        return sign * Math.sign(c);
      });
    } else {
      const i = query.dimensions.indexOf(order.by as DimensionName);
      const compare = dimensionCompare(order.by as DimensionName);
      keys.push((a, b) => sign * compare(a.dims[i], b.dims[i]));
    }
  }
  query.dimensions.forEach((d, i) => {
    const compare = dimensionCompare(d);
    keys.push((a, b) => compare(a.dims[i], b.dims[i]));
  });
  rows.sort((a, b) => {
    for (const key of keys) {
      const c = key(a, b);
      if (c !== 0) return c;
    }
    return 0;
  });
  return {
    rows: rows.slice(query.offset, query.offset + query.limit),
    allRows: rows,
    totals: query.includeTotals ? values(partials.all) : undefined,
    totalRows: rows.length,
  };
}
