/**
 * What the dashboard shows, as one plain value (the view): range,
 * comparison, interval, chart metric, filters, each panel's tab, the open
 * "more" list, the event whose properties are broken down and the funnel's
 * steps. The URL holds it (url.ts); every change makes a new view through the
 * functions here, so the logic is tested without a browser.
 *
 * The names and limits are the reports' vocabulary's, and what a query
 * takes is typed by the generated client, so a name the API does not know
 * does not compile.
 */
import type { components } from "../../clients/typescript/src/schema.ts";
import {
  DAY_PRESETS,
  MAX_STEPS,
  MIN_STEPS,
  OPERATORS,
  TIME_DIMENSIONS,
  type TimeDimension,
} from "../../services/lib/stats/vocabulary.ts";

type Query = components["schemas"]["Query"];
export type MetricName = Query["metrics"][number];
export type Operator = NonNullable<Query["filters"]>[number][0];
export type Step = components["schemas"]["FunnelStep"];
export { MAX_STEPS, MIN_STEPS, OPERATORS };

/** The live view (the last 30 minutes), then the presets of whole local days. */
export const PRESETS = ["realtime", ...DAY_PRESETS] as const;
export type Preset = typeof PRESETS[number];
/** A preset, or first and last local day ("YYYY-MM-DD"), inclusive. */
export type Range = Preset | [string, string];

export type CompareChoice = "off" | NonNullable<NonNullable<Query["include"]>["compare"]>;

/** The chart's buckets: the grains of the time dimensions. */
export type Interval = TimeDimension extends `time:${infer G}` ? G : never;
export const INTERVALS: readonly Interval[] = TIME_DIMENSIONS.map((d) => d.slice(5) as Interval);

/** A filter as the query takes it: operator, dimension, values. */
export type Filter = [Operator, string, string[]];

/** Metrics the chart can draw (revenue is per currency and is not drawn). */
export const CHART_METRICS = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
  "events",
  "leads",
  "conversion_rate",
] as const satisfies readonly MetricName[];
export type ChartMetric = typeof CHART_METRICS[number];

export const PANEL_IDS = ["sources", "pages", "locations", "devices", "events", "ads"] as const;
export type PanelId = typeof PANEL_IDS[number];

export interface View {
  range: Range;
  compare: CompareChoice;
  /** The chart's buckets; undefined: the range's default. */
  interval?: Interval;
  metric: ChartMetric;
  filters: Filter[];
  /** Each panel's chosen tab, where it is not the first. */
  tabs: Partial<Record<PanelId, string>>;
  /** The panel whose full list is open. */
  more?: PanelId;
  /** The event type whose properties the Events panel breaks down, and the property. */
  event?: string;
  property?: string;
  /** The funnel's steps; empty: no funnel asked for. */
  steps: Step[];
}

export const DEFAULT_VIEW: View = {
  range: "30d",
  compare: "previous_period",
  metric: "visitors",
  filters: [],
  tabs: {},
  steps: [],
};

export const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar day "YYYY-MM-DD". */
export function isDay(text: string): boolean {
  if (!DAY_PATTERN.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** Days from first to last, both counted ("2026-01-01".."2026-01-01" is 1). */
export function daysBetween(first: string, last: string): number {
  return Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / 864e5) +
    1;
}

/** The query's date_range of a view's range: realtime is the last 30 minutes. */
export function dateRangeOf(range: Range): Query["date_range"] {
  return range === "realtime" ? "30m" : range;
}

export function isRealtime(view: View): boolean {
  return view.range === "realtime";
}

/** Whether the range can be compared (the API refuses a comparison of "all"). */
export function canCompare(range: Range): boolean {
  return range !== "all";
}

/** The query's include.compare, or undefined when the view compares nothing. */
export function compareOf(view: View): Exclude<CompareChoice, "off"> | undefined {
  if (view.compare === "off" || !canCompare(view.range)) return undefined;
  return view.compare;
}

/**
 * The intervals that make sense for a range of `days` local days: one bucket
 * per minute only in the live view, and never more than a few hundred buckets
 * nor a single one.
 */
export function intervalsFor(range: Range, days: number): Interval[] {
  if (range === "realtime") return ["minute"];
  if (days <= 1) return ["hour"];
  if (days <= 7) return ["hour", "day"];
  if (days <= 31) return ["day", "week"];
  if (days <= 366) return ["day", "week", "month"];
  return ["week", "month"];
}

/** The chart's interval: the view's when it fits the range, else the range's default. */
export function intervalOf(view: View, days: number): Interval {
  const allowed = intervalsFor(view.range, days);
  if (view.interval && allowed.includes(view.interval)) return view.interval;
  if (view.range === "7d") return "day";
  if (days > 92 && allowed.includes("month")) return "month";
  return allowed.includes("day") ? "day" : allowed[0];
}

/** How many days a range covers before an answer tells: the longest it can be. */
export function daysOf(range: Range): number {
  if (Array.isArray(range)) return daysBetween(range[0], range[1]);
  switch (range) {
    case "realtime":
    case "today":
    case "yesterday":
      return 1;
    case "7d":
      return 7;
    case "30d":
      return 30;
    case "month":
      return 31;
    case "year":
      return 366;
    case "all":
      return Infinity;
  }
}

function sameFilter(a: Filter, b: Filter): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2].join("\u0000") === b[2].join("\u0000");
}

/**
 * The view with one more filter. A filter `is` on a dimension replaces the
 * dimension's other `is` filter (two would hold together for no row), and a
 * filter already there is not added twice.
 */
export function withFilter(view: View, filter: Filter): View {
  let filters = view.filters;
  if (filter[0] === "is") filters = filters.filter((f) => !(f[0] === "is" && f[1] === filter[1]));
  if (filters.some((f) => sameFilter(f, filter))) return { ...view, filters, more: undefined };
  return { ...view, filters: [...filters, filter], more: undefined };
}

export function withoutFilter(view: View, index: number): View {
  return { ...view, filters: view.filters.filter((_, i) => i !== index) };
}

/** The filter of saved segments: `["is", "segment", [ID]]` (is_not: the visits of none). */
export const SEGMENT = "segment";

/** The filters a funnel takes: visit: ones and segments (its rows are the steps). */
export function funnelFilters(filters: Filter[]): Filter[] {
  return filters.filter((f) => f[1].startsWith("visit:") || f[1] === SEGMENT);
}

/** The step as the funnel's body takes it, or undefined when it is not complete. */
export function validStep(step: Step): Step | undefined {
  if ("page" in step) return step.page.trim() ? { page: step.page.trim() } : undefined;
  if ("event" in step) return step.event ? step : undefined;
  return step;
}
