/**
 * Which stored data answers a query, and how its rows are grouped: one pure
 * decision from the query's shape (as Plausible's table_decider), which the
 * engine (engine.ts) follows and nothing else second-guesses.
 *
 * | query                                                                   | source                             |
 * | ----------------------------------------------------------------------- | ---------------------------------- |
 * | whole local days in the site's zone, no bots; by day, week or month or   | rollups of whole days and months,  |
 * | no time; breakdown and filters on at most one visit attribute, or on     | the days not built from the rows;  |
 * | event:name with event:page or one event:props:KEY; conversion_rate by    | visits crossing the range's ends   |
 * | time with event:name filters                                             | from their rows                    |
 * | anything else with a visit: dimension, filter or metric                  | ingest.visits and the rows         |
 * | nothing of visits                                                        | the rows alone                     |
 *
 * The grouping (aggregate.ts) is how the base tables answer: the rows
 * joined to their visits, the rows alone, or the visits alone. A query the
 * rollups answer has one too: what answers it while too many of its days
 * are not built (a fact of the stored data, which the engine finds in the
 * query's snapshot).
 */
import { localDay } from "./calendar.ts";
import { localDays } from "./rollups.ts";
import { ALL, PAGE } from "./rollup_sums.ts";
import {
  grainOf,
  isEventDimension,
  isPropsDimension,
  isTimeDimension,
  isVisitDimension,
  type MetricName,
  SEGMENT,
  type StatsQuery,
} from "./query.ts";

/** The metrics counted over visits (their bounces, durations and page views). */
export const VISIT_METRICS: readonly MetricName[] = [
  "visits",
  "bounce_rate",
  "visit_duration",
  "views_per_visit",
];
/** The metrics counted over rows, which rollups of event: dimensions hold. */
const ROW_METRICS: readonly MetricName[] = ["pageviews", "events", "leads", "revenue", "visitors"];

/** How the base tables group a query's rows (aggregate.ts). */
export type Grouping = "rows" | "rows-alone" | "visits";

/** What answers a query: rollups, ingest.visits with the rows, or the rows alone. */
export type Source = "rollups" | "visits" | "rows";

/** How rollups answer a query. */
export interface RollupRead {
  /** The rollups' dimension read: a visit attribute's, event:page, event:props:KEY or all. */
  dimension: string;
  /** The visit attribute's ingest.visits column, for a visit: dimension. */
  column?: string;
  /**
   * Whether visits crossing the range's ends are put right from their rows:
   * for visit metrics, and for exit pages.
   */
  crossing: boolean;
  /** Whether the rows of visits crossing the range's end move to their exit page in it. */
  exitPages: boolean;
  /** Whether conversion_rate is asked: the all-visitors sums are read beside. */
  conversion: boolean;
}

export interface Decision {
  source: Source;
  /** The base tables' grouping; for rollups, what answers while too few days are built. */
  grouping: Grouping;
  /** Set when the source is rollups. */
  rollup?: RollupRead;
}

/** What the decision reads of a planned query (plan.ts). */
export interface DecidedPlan {
  query: StatsQuery;
  /** The zone the query's days are local to. */
  zone: string;
  startMs: number;
  endMs: number;
}

/** Whether a query reads nothing of visits: no visit: dimension or filter. */
export function rowsAlone(query: StatsQuery): boolean {
  return !query.dimensions.some(isVisitDimension) &&
    !query.filters.some((f) => isVisitDimension(f.dimension) || f.dimension === SEGMENT);
}

/** Whether a query needs no row's own time, event name, page or value: visits alone answer it. */
export function visitsAlone(query: StatsQuery): boolean {
  return !query.dimensions.some((d) => isTimeDimension(d) || isEventDimension(d)) &&
    !query.filters.some((f) => isEventDimension(f.dimension)) &&
    !query.metrics.includes("revenue") && !query.metrics.includes("conversion_rate");
}

/** The base tables' grouping of a query. */
export function groupingOf(query: StatsQuery): Grouping {
  if (visitsAlone(query)) return "visits";
  if (rowsAlone(query) && !query.metrics.some((m) => VISIT_METRICS.includes(m))) {
    return "rows-alone";
  }
  return "rows";
}

/** Whether [startMs, endMs) is whole local days of `zone`. */
function wholeDays(plan: DecidedPlan): boolean {
  const { zone, startMs, endMs } = plan;
  if (endMs <= startMs) return false;
  const days = localDays(zone, startMs, localDay(endMs - 1, zone).add({ days: 1 }));
  return days.length > 0 && days[0].start === startMs && days.at(-1)!.end === endMs;
}

/** How rollups answer a query, or undefined when they cannot. */
function rollupReadOf(plan: DecidedPlan, siteZone: string | undefined): RollupRead | undefined {
  const q = plan.query;
  if (q.includeBots || siteZone === undefined || plan.zone !== siteZone) return undefined;
  // A segment filter left as one (segments.ts) keeps visits by what no rollup holds.
  if (q.filters.some((f) => f.dimension === SEGMENT)) return undefined;
  const times = q.dimensions.filter(isTimeDimension);
  if (times.length > 1 || times.some((d) => !["day", "week", "month"].includes(grainOf(d)))) {
    return undefined;
  }
  if (!wholeDays(plan)) return undefined;
  const named = new Set([
    ...q.dimensions.filter((d) => !isTimeDimension(d)),
    ...q.filters.map((f) => f.dimension),
  ]);
  const visits = q.metrics.some((m) => VISIT_METRICS.includes(m));
  const conversion = q.metrics.includes("conversion_rate");
  const visitNamed = [...named].filter(isVisitDimension);
  if (visitNamed.length === named.size && !conversion) {
    if (named.size > 1) return undefined;
    const dimension = visitNamed[0] ?? ALL;
    const column = visitNamed[0]?.slice("visit:".length);
    // A visit's exit page depends on the range: its rows count under its last page view in it.
    const exitPages = column === "exit_page";
    return { dimension, column, crossing: visits || exitPages, exitPages, conversion };
  }
  if (visits || visitNamed.length > 0) return undefined;
  const other = [...named].filter((d) => d !== "event:name");
  if (other.length > 1) return undefined;
  if (other.length === 1 && other[0] !== PAGE && !isPropsDimension(other[0])) return undefined;
  if (conversion && (q.dimensions.some((d) => !isTimeDimension(d)) || other.length > 0)) {
    return undefined;
  }
  if (!q.metrics.every((m) => ROW_METRICS.includes(m) || m === "conversion_rate")) return undefined;
  return { dimension: other[0] ?? PAGE, crossing: false, exitPages: false, conversion };
}

/**
 * The decision for a query planned in `plan.zone`, of a site whose rollups
 * are built in `siteZone` (undefined: the site has none).
 */
export function decide(plan: DecidedPlan, siteZone: string | undefined): Decision {
  const grouping = groupingOf(plan.query);
  const rollup = rollupReadOf(plan, siteZone);
  if (rollup) return { source: "rollups", grouping, rollup };
  return { source: grouping === "rows-alone" ? "rows" : "visits", grouping };
}
