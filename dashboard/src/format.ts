/** How the dashboard shows metrics, changes, dimension values and times: plain functions, tested beside. */

import type { Comparison, ResultRow } from "./api.ts";
import type { MetricName } from "./state.ts";

/** A metric's value: a number, or for revenue minor units per currency. */
export type Metric = ResultRow["metrics"][number];
/** A metric's change against the compared range: percent, points, per currency, or null. */
export type Change = Comparison["change"][number];
export type Row = string[];

const INTEGER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const DECIMAL = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

/** Whole numbers grouped by thousands (1,234); other numbers with up to two decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value) ? INTEGER.format(value) : DECIMAL.format(value);
}

/** One currency's amount of minor units as `25.98 EUR`. */
export function formatMoney(currency: string, minor: number): string {
  return `${
    (minor / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  } ${currency}`;
}

/** Revenue per currency; percentages with %, durations as m:ss, counts grouped. */
export function formatMetric(name: string, value: Metric | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "object") {
    const parts = Object.entries(value).map(([currency, minor]) => formatMoney(currency, minor));
    return parts.length ? parts.join(", ") : "0";
  }
  if (name === "bounce_rate" || name === "conversion_rate") return `${value.toFixed(1)}%`;
  if (name === "visit_duration") return formatDuration(value);
  return formatNumber(value);
}

/** Seconds as m:ss, or h:mm:ss from an hour. */
export function formatDuration(seconds: number): string {
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** Rates change in percentage points; every other metric in percent. */
export function isRate(metric: string): boolean {
  return metric === "bounce_rate" || metric === "conversion_rate";
}

/** Whether a rise of the metric is good news (a higher bounce rate is not). */
export function higherIsBetter(metric: string): boolean {
  return metric !== "bounce_rate";
}

/** "good", "bad" or "same" for a change of a metric; null (nothing before) is neither. */
export function changeTone(metric: string, change: number | null): "good" | "bad" | "same" {
  if (change === null || change === 0) return "same";
  return (change > 0) === higherIsBetter(metric) ? "good" : "bad";
}

/** A change as text: `↑ 12.5%`, `↓ 3.1 pp`, `0%`, or `new` where the compared value was 0. */
export function formatChange(metric: string, change: number | null): string {
  if (change === null) return "new";
  const unit = isRate(metric) ? " pp" : "%";
  const size = `${Math.abs(change).toFixed(1).replace(/\.0$/, "")}${unit}`;
  if (change === 0) return `0${unit}`;
  return `${change > 0 ? "↑" : "↓"} ${size}`;
}

/** The change said in words, for screen readers and tooltips. */
export function describeChange(metric: string, change: number | null, before: string): string {
  if (change === null) return `none in the compared period`;
  const unit = isRate(metric) ? " percentage points" : "%";
  const size = `${Math.abs(change)}${unit}`;
  if (change === 0) return `unchanged from ${before}`;
  return `${change > 0 ? "up" : "down"} ${size} from ${before}`;
}

export const METRIC_LABELS: Record<MetricName, string> = {
  visitors: "Visitors",
  visits: "Visits",
  pageviews: "Page views",
  bounce_rate: "Bounce rate",
  visit_duration: "Visit duration",
  views_per_visit: "Views per visit",
  events: "Events",
  leads: "Leads",
  revenue: "Revenue",
  conversion_rate: "Conversion rate",
};

const MONTHS = [
  "Jan",
  "Feb",
  "Mar",
  "Apr",
  "May",
  "Jun",
  "Jul",
  "Aug",
  "Sep",
  "Oct",
  "Nov",
  "Dec",
];

function dayText(day: string, withYear = false): string {
  const [y, m, d] = day.split("-");
  return `${Number(d)} ${MONTHS[Number(m) - 1]}${withYear ? ` ${y}` : ""}`;
}

/**
 * A time dimension's label as people read it, from the label alone (its
 * local time is already in the text; no zone arithmetic in the browser):
 * minute and hour `14:05` (with the day where `withDay`), day `21 Nov`,
 * week `week of 16 Nov`, month `Nov 2026`.
 */
export function formatTimeLabel(label: string, withDay = false): string {
  const time = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})/.exec(label);
  if (time) return `${withDay ? `${dayText(time[1])}, ` : ""}${time[2]}:${time[3]}`;
  const month = /^(\d{4})-(\d{2})$/.exec(label);
  if (month) return `${MONTHS[Number(month[2]) - 1]} ${month[1]}`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(label)) return dayText(label);
  return label;
}

/** A range of local days as `1 Nov – 20 Nov 2026`, or one day as `20 Nov 2026`. */
export function formatDays(first: string, last: string): string {
  if (first === last) return dayText(first, true);
  const sameYear = first.slice(0, 4) === last.slice(0, 4);
  return `${dayText(first, !sameYear)} – ${dayText(last, true)}`;
}

const REGIONS = (() => {
  try {
    return new Intl.DisplayNames(["en"], { type: "region" });
  } catch {
    return undefined;
  }
})();

/** A country code's name (`DE` → `Germany`), the code where the name is unknown. */
export function countryName(code: string): string {
  try {
    return REGIONS?.of(code) ?? code;
  } catch {
    return code;
  }
}

/** A dimension value as a row shows it; null as the panel says (`Direct / none`). */
export function valueLabel(dimension: string, value: string | null, none = "(none)"): string {
  if (value === null) return none;
  if (dimension === "visit:country") return countryName(value);
  return value;
}

/** RFC 4180 CSV; a cell starting with = + - @ is quoted with a ' so a spreadsheet never runs it. */
export function csvOf(headers: string[], rows: Row[]): string {
  const cell = (value: string) => {
    const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [headers, ...rows].map((row) => row.map(cell).join(",")).join("\r\n") + "\r\n";
}
