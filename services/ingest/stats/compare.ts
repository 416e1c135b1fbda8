/**
 * include.compare: each row of the answer beside the row with the same
 * non-time dimension values over the compared range, a time dimension's
 * value matched by position (the n-th bucket of the range with the n-th
 * bucket of the compared range), and how each metric changed. Pure.
 */
import { type AnswerRow, divideHalfUp, type MetricAnswer, metricValue } from "./finish.ts";
import { emptySums } from "./plan.ts";
import { isTimeDimension, type MetricName, type StatsQuery, type TimeDimension } from "./query.ts";

/** A metric's change: a number, null where it cannot be said, per currency for revenue. */
export type ChangeAnswer = number | null | Map<string, number | null>;

export interface Comparison {
  dims: (string | null)[];
  metrics: MetricAnswer[];
  change: ChangeAnswer[];
}

/** Every label of each time dimension, in order, over the range and over the compared range. */
export interface ComparedLabels {
  range: ReadonlyMap<TimeDimension, readonly string[]>;
  compared: ReadonlyMap<TimeDimension, readonly string[]>;
}

/** A shown value as an integer number of hundredths (values have at most two decimals). */
const hundredths = (n: number) => BigInt(Math.round(n * 100));

/** (now - before) / before × 100, one decimal; null where before is 0. */
function percentChange(now: number, before: number): number | null {
  if (before === 0) return null;
  return Number(divideHalfUp(1000n * (hundredths(now) - hundredths(before)), hundredths(before))) /
    10;
}

/** How a metric changed from `before` to `now`, as the contract says per metric. */
export function changeOf(
  metric: MetricName,
  now: MetricAnswer,
  before: MetricAnswer,
): ChangeAnswer {
  if (now instanceof Map || before instanceof Map) {
    const a = now as Map<string, bigint>;
    const b = before as Map<string, bigint>;
    const currencies = [...new Set([...a.keys(), ...b.keys()])].sort();
    return new Map(currencies.map((c) => {
      const was = b.get(c) ?? 0n;
      const is = a.get(c) ?? 0n;
      return [c, was === 0n ? null : Number(divideHalfUp(1000n * (is - was), was)) / 10];
    }));
  }
  if (metric === "bounce_rate" || metric === "conversion_rate") {
    return (Math.round(now * 10) - Math.round(before * 10)) / 10;
  }
  return percentChange(now, before);
}

/** A row's key with its time values replaced by their positions; undefined where one has none. */
function positionalKey(
  dims: readonly (string | null)[],
  times: readonly (readonly string[] | undefined)[],
): string | undefined {
  const key: (string | number | null)[] = [];
  for (let i = 0; i < dims.length; i++) {
    const labels = times[i];
    if (!labels) {
      key.push(dims[i]);
      continue;
    }
    const position = dims[i] === null ? -1 : labels.indexOf(dims[i]!);
    if (position < 0) return undefined;
    key.push(position);
  }
  return JSON.stringify(key);
}

/** The comparison of each row (null where the compared range has no bucket at its position). */
export function compareRows(
  query: StatsQuery,
  rows: readonly AnswerRow[],
  compared: readonly AnswerRow[],
  labels: ComparedLabels,
): (Comparison | null)[] {
  const timesOf = (which: ComparedLabels["range"]) =>
    query.dimensions.map((d) => (isTimeDimension(d) ? which.get(d) ?? [] : undefined));
  const rangeTimes = timesOf(labels.range);
  const comparedTimes = timesOf(labels.compared);
  const byKey = new Map<string, AnswerRow>();
  for (const row of compared) {
    const key = positionalKey(row.dims, comparedTimes);
    if (key !== undefined) byKey.set(key, row);
  }
  const zeros = query.metrics.map((m) => metricValue(m, emptySums()));
  return rows.map((row) => {
    const key = positionalKey(row.dims, rangeTimes);
    if (key === undefined) return null;
    const dims = row.dims.map((value, i) => {
      const times = rangeTimes[i];
      return times ? comparedTimes[i]![times.indexOf(value!)] ?? undefined : value;
    });
    if (dims.some((d) => d === undefined)) return null;
    const before = byKey.get(key)?.metrics ?? zeros;
    return {
      dims: dims as (string | null)[],
      metrics: before,
      change: query.metrics.map((m, i) => changeOf(m, row.metrics[i], before[i])),
    };
  });
}

/** The totals beside the compared range's totals. */
export function compareTotals(
  query: StatsQuery,
  totals: readonly MetricAnswer[],
  before: readonly MetricAnswer[],
): Comparison {
  return {
    dims: [],
    metrics: [...before],
    change: query.metrics.map((m, i) => changeOf(m, totals[i], before[i])),
  };
}
