/**
 * The bodies of POST /stats/v1/query and /stats/v1/funnel the page sends for
 * a view: plain functions, so what each card, chart, panel and funnel asks
 * is tested without a browser (and the browser tests ask the same).
 */
import type { FunnelBody, QueryBody, SiteInfo } from "./api.ts";
import type { Tab } from "./panels.ts";
import {
  compareOf,
  dateRangeOf,
  type Filter,
  funnelFilters,
  type Interval,
  type MetricName,
  type Step,
  validStep,
  type View,
} from "./state.ts";

/** Rows of a panel's short list and of its full list. */
export const SHORT_LIST = 9;
export const FULL_LIST = 100;
/** The window of "current visitors" in the header. */
export const CURRENT_RANGE = "5m";

const VISIT_METRICS: MetricName[] = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
];

/** The event:name the view filters on with `is`, if any (conversion rates then make sense). */
export function goalOf(view: View): string | undefined {
  const goal = view.filters.find((f) => f[0] === "is" && f[1] === "event:name");
  return goal?.[2][0];
}

/**
 * The top cards: the visit metrics, events and revenue where the site
 * declares event types (revenue where one brings it), leads, and the
 * conversion rate while an event filter is on.
 */
export function cardMetrics(site: SiteInfo | undefined, view: View): MetricName[] {
  const types = site?.eventTypes ?? [];
  return [
    ...VISIT_METRICS,
    ...(types.length ? ["events" as const] : []),
    ...(types.some((t) => t.bringsRevenue) ? ["revenue" as const] : []),
    "leads",
    ...(goalOf(view) ? ["conversion_rate" as const] : []),
  ];
}

function base(view: View): Pick<QueryBody, "date_range" | "filters"> {
  return { date_range: dateRangeOf(view.range), filters: view.filters };
}

type Include = NonNullable<QueryBody["include"]>;

function include(view: View, extra: Include = {}): Include {
  const compare = compareOf(view);
  return compare === undefined ? extra : { ...extra, compare };
}

export function summaryQuery(view: View, metrics: MetricName[]): QueryBody {
  return { metrics, ...base(view), include: include(view) };
}

/** The chart's metric over time, every bucket of the range labelled. */
export function chartQuery(view: View, interval: Interval): QueryBody {
  return {
    metrics: [view.metric],
    ...base(view),
    dimensions: [`time:${interval}`],
    include: { time_labels: true },
  };
}

/** The same over the compared days, drawn as the second series bucket by bucket. */
export function comparedChartQuery(
  view: View,
  interval: Interval,
  days: [string, string],
): QueryBody {
  return { ...chartQuery(view, interval), date_range: days };
}

/** The dimension a tab lists: event:props:KEY for the Events panel's properties. */
export function tabDimension(tab: Tab, view: View): string | undefined {
  if (tab.dimension !== "event:props") return tab.dimension;
  return view.event && view.property ? `event:props:${view.property}` : undefined;
}

/** The filters of a tab's list: the view's, plus what keeps the list to its rows. */
export function tabFilters(tab: Tab, view: View, dimension: string): Filter[] {
  const filters = [...view.filters];
  // A tab that lists no "none" row asks for rows with a value (contains "" holds for any text).
  if (tab.none === undefined) filters.push(["contains", dimension, [""]]);
  if (tab.dimension === "event:props" && view.event) {
    filters.push(["is", "event:name", [view.event]]);
  }
  return filters;
}

/** A panel's list: short (its first metric, or the events' counts) or full, with the change. */
export function listQuery(tab: Tab, view: View, full: boolean): QueryBody | undefined {
  const dimension = tabDimension(tab, view);
  if (!dimension) return undefined;
  const eventsTab = tab.dimension.startsWith("event:name") || tab.dimension === "event:props";
  return {
    metrics: full || eventsTab ? tab.metrics : [tab.metrics[0]],
    ...base(view),
    filters: tabFilters(tab, view, dimension),
    dimensions: [dimension],
    limit: full ? FULL_LIST : SHORT_LIST,
    ...(full ? { include: include(view) } : {}),
  };
}

/** One event's conversion rate: the share of the view's visitors who sent it. */
export function conversionQuery(view: View, eventName: string): QueryBody {
  return {
    metrics: ["conversion_rate"],
    ...base(view),
    filters: [...view.filters, ["is", "event:name", [eventName]]],
  };
}

/** The values a dimension takes in the view's range, as suggestions of the filter dialog. */
export function suggestionsQuery(view: View, dimension: string): QueryBody {
  return {
    metrics: ["visitors"],
    date_range: dateRangeOf(view.range),
    dimensions: [dimension],
    filters: [["contains", dimension, [""]]],
    limit: 50,
  };
}

export function currentVisitorsQuery(): QueryBody {
  return { metrics: ["visitors"], date_range: CURRENT_RANGE };
}

/** The funnel of the view's complete steps (undefined with fewer than two). */
export function funnelQuery(view: View): FunnelBody | undefined {
  const steps = view.steps.map(validStep).filter((s): s is Step => s !== undefined);
  if (steps.length < 2) return undefined;
  return { date_range: dateRangeOf(view.range), filters: funnelFilters(view.filters), steps };
}
