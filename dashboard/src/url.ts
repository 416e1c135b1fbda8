/**
 * The view in the page's URL, so the back button works and a link opens the
 * same view for anyone signed in with a key of the site. The report key is
 * never part of it. Defaults are left out; a value the page does not know is
 * read as the default, never as an error.
 *
 *   ?range=7d | range=2026-11-01..2026-11-20
 *   &compare=off | year_over_year | 2026-10-01..2026-10-20   (default previous_period)
 *   &interval=week &metric=pageviews
 *   &f=is,visit:channel,paid|email  (one a filter; `is,segment,ID` applies a saved segment, repeated for several; after the
 *      second comma the filter's values, separated by "|"; a "|" or a backslash
 *      inside a value is written with a backslash before it)
 *   &sources=utm_campaign &devices=screen ...   (a panel's tab, when not the first)
 *   &more=pages &event=purchase &property=product
 *   &step=page:/pricing* &step=event:signup &step=lead   (the funnel, in order)
 */
import {
  CHART_METRICS,
  type ChartMetric,
  type CompareChoice,
  DEFAULT_VIEW,
  type Filter,
  type Interval,
  INTERVALS,
  isDay,
  MAX_STEPS,
  type Operator,
  OPERATORS,
  PANEL_IDS,
  type PanelId,
  type Preset,
  PRESETS,
  type Range,
  SEGMENT,
  type Step,
  type View,
} from "./state.ts";

function daysOfText(text: string | null): [string, string] | undefined {
  const [first, last, extra] = (text ?? "").split("..");
  if (extra !== undefined || !isDay(first ?? "") || !isDay(last ?? "") || first > last) {
    return undefined;
  }
  return [first, last];
}

function rangeOf(text: string | null): Range {
  if ((PRESETS as readonly string[]).includes(text ?? "")) return text as Preset;
  return daysOfText(text) ?? DEFAULT_VIEW.range;
}

function compareOfText(text: string | null): CompareChoice {
  if (text === "off" || text === "previous_period" || text === "year_over_year") return text;
  return daysOfText(text) ?? DEFAULT_VIEW.compare;
}

export function filterOfText(text: string): Filter | undefined {
  const first = text.indexOf(",");
  const second = text.indexOf(",", first + 1);
  if (first < 0 || second < 0) return undefined;
  const operator = text.slice(0, first);
  const dimension = text.slice(first + 1, second);
  const values = valuesOfText(text.slice(second + 1));
  if (!(OPERATORS as readonly string[]).includes(operator)) return undefined;
  const named = /^(visit|event):[a-z_]+(:[A-Za-z][A-Za-z0-9_]*)?$/.test(dimension) ||
    (dimension === SEGMENT && (operator === "is" || operator === "is_not"));
  if (!named || values.some((value) => value === "")) return undefined;
  return [operator as Operator, dimension, values];
}

/** One filter's text: its values joined by "|", each "|" and "\\" escaped. */
export function filterText(filter: Filter): string {
  const values = filter[2].map((value) => value.replace(/[\\|]/g, (c) => `\\${c}`));
  return `${filter[0]},${filter[1]},${values.join("|")}`;
}

/** The values of a filter's text: split at each "|" that is not escaped. */
function valuesOfText(text: string): string[] {
  const values = [""];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) values[values.length - 1] += text[++i];
    else if (c === "|") values.push("");
    else values[values.length - 1] += c;
  }
  return values;
}

export function stepOfText(text: string): Step | undefined {
  if (text === "lead") return { lead: true };
  if (text.startsWith("page:") && text.length > 5) return { page: text.slice(5) };
  if (text.startsWith("event:") && text.length > 6) return { event: text.slice(6) };
  return undefined;
}

export function stepText(step: Step): string {
  if ("page" in step) return `page:${step.page}`;
  if ("event" in step) return `event:${step.event}`;
  return "lead";
}

function rangeText(range: string | [string, string]): string {
  return Array.isArray(range) ? `${range[0]}..${range[1]}` : range;
}

/** The view a URL's query string describes. */
export function viewOf(search: string): View {
  const params = new URLSearchParams(search);
  const interval = params.get("interval");
  const metric = params.get("metric");
  const tabs: View["tabs"] = {};
  for (const id of PANEL_IDS) {
    const tab = params.get(id);
    if (tab && /^[a-z_]+$/.test(tab)) tabs[id] = tab;
  }
  const more = params.get("more");
  const steps = params.getAll("step").map(stepOfText).filter((s): s is Step => s !== undefined);
  return {
    range: rangeOf(params.get("range")),
    compare: compareOfText(params.get("compare")),
    interval: (INTERVALS as readonly string[]).includes(interval ?? "")
      ? interval as Interval
      : undefined,
    metric: (CHART_METRICS as readonly string[]).includes(metric ?? "")
      ? metric as ChartMetric
      : DEFAULT_VIEW.metric,
    filters: params.getAll("f").map(filterOfText).filter((f): f is Filter => f !== undefined),
    tabs,
    more: (PANEL_IDS as readonly string[]).includes(more ?? "") ? more as PanelId : undefined,
    event: params.get("event") || undefined,
    property: params.get("property") || undefined,
    steps: steps.slice(0, MAX_STEPS),
  };
}

/** The query string of a view ("" for the default view), defaults left out. */
export function searchOf(view: View): string {
  const params = new URLSearchParams();
  if (rangeText(view.range) !== rangeText(DEFAULT_VIEW.range)) {
    params.set("range", rangeText(view.range));
  }
  if (rangeText(view.compare) !== rangeText(DEFAULT_VIEW.compare)) {
    params.set("compare", rangeText(view.compare));
  }
  if (view.interval) params.set("interval", view.interval);
  if (view.metric !== DEFAULT_VIEW.metric) params.set("metric", view.metric);
  for (const filter of view.filters) params.append("f", filterText(filter));
  for (const id of PANEL_IDS) {
    const tab = view.tabs[id];
    if (tab) params.set(id, tab);
  }
  if (view.more) params.set("more", view.more);
  if (view.event) params.set("event", view.event);
  if (view.property) params.set("property", view.property);
  for (const step of view.steps) params.append("step", stepText(step));
  const text = params.toString();
  return text ? `?${text}` : "";
}
