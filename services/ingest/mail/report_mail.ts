/**
 * The mails themselves: an email report and a traffic alert as a subject,
 * a plain-text part and an HTML part (sent as multipart/alternative). Pure:
 * the numbers come in, already read from the reports engine
 * (report_numbers.ts), so a mail says what the dashboard says.
 */
import type { Every } from "./schedule.ts";

export const REPORT_METRICS = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
] as const;
export type ReportMetric = typeof REPORT_METRICS[number];

export interface MetricLine {
  metric: ReportMetric;
  value: number;
  /** Percent change (points for bounce_rate) against the period before; null when it had none. */
  change: number | null;
}

export interface ReportNumbers {
  metrics: MetricLine[];
  /** Up to 5, most visitors first; a null source is direct traffic. */
  sources: { source: string | null; visitors: number }[];
  /** Up to 5, most page views first. */
  pages: { page: string; pageviews: number }[];
}

export interface ReportFacts {
  siteName: string;
  every: Every;
  first: Temporal.PlainDate;
  last: Temporal.PlainDate;
  previousFirst: Temporal.PlainDate;
  previousLast: Temporal.PlainDate;
  timeZone: string;
  /** The dashboard's address: PUBLIC_URL + /dashboard/. */
  dashboardUrl: string;
  numbers: ReportNumbers;
}

export interface Mail {
  subject: string;
  text: string;
  html: string;
}

const LABELS: Record<ReportMetric, string> = {
  visitors: "Visitors",
  visits: "Visits",
  pageviews: "Page views",
  bounce_rate: "Bounce rate",
  visit_duration: "Visit duration",
};

const count = new Intl.NumberFormat("en-GB");
const oneDecimal = new Intl.NumberFormat("en-GB", {
  minimumFractionDigits: 1,
  maximumFractionDigits: 1,
});

/** "1m 05s", "45s", "1h 02m". */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

export function metricValue(line: MetricLine): string {
  if (line.metric === "bounce_rate") return `${oneDecimal.format(line.value)}%`;
  if (line.metric === "visit_duration") return duration(line.value);
  return count.format(line.value);
}

/** "+12.5%", "−3.0%", "+1.2 pp" for the bounce rate, "new" when there was nothing before. */
export function changeText(line: MetricLine): string {
  if (line.change === null) return "new";
  const sign = line.change > 0 ? "+" : line.change < 0 ? "−" : "±";
  const unit = line.metric === "bounce_rate" ? " pp" : "%";
  return `${sign}${oneDecimal.format(Math.abs(line.change))}${unit}`;
}

const dayMonth = (d: Temporal.PlainDate) =>
  d.toLocaleString("en-GB", { day: "numeric", month: "short" });
const dayMonthYear = (d: Temporal.PlainDate) =>
  d.toLocaleString("en-GB", { day: "numeric", month: "short", year: "numeric" });

/** "16–22 Nov 2026", "28 Dec 2026 – 3 Jan 2027", "November 2026". */
export function periodText(every: Every, first: Temporal.PlainDate, last: Temporal.PlainDate) {
  if (every === "month") return first.toLocaleString("en-GB", { month: "long", year: "numeric" });
  if (first.year !== last.year) return `${dayMonthYear(first)} – ${dayMonthYear(last)}`;
  if (first.month !== last.month) return `${dayMonth(first)} – ${dayMonthYear(last)}`;
  return `${first.day}–${dayMonthYear(last)}`;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/** A subject line never carries a line break (a name could try to add headers). */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, " ");

const sourceName = (source: string | null) => source ?? "Direct / none";

const pad = (text: string, width: number) => text + " ".repeat(Math.max(1, width - text.length));

function textTable(title: string, rows: [string, string][], empty: string): string {
  if (rows.length === 0) return `${title}\n  ${empty}\n`;
  const width = Math.max(...rows.map(([name]) => name.length)) + 3;
  return `${title}\n` +
    rows.map(([name, value], i) => `  ${i + 1}. ${pad(name, width)}${value}`).join("\n") + "\n";
}

const STYLE = {
  body: "margin:0;padding:24px;background:#f4f5f7;font-family:Helvetica,Arial,sans-serif;" +
    "color:#1f2933;",
  card: "max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;",
  h1: "font-size:20px;margin:0 0 4px 0;",
  muted: "color:#616e7c;font-size:13px;margin:0 0 20px 0;",
  h2: "font-size:15px;margin:24px 0 8px 0;",
  table: "width:100%;border-collapse:collapse;font-size:14px;",
  cell: "padding:6px 0;border-bottom:1px solid #e4e7eb;",
  number: "padding:6px 0;border-bottom:1px solid #e4e7eb;text-align:right;",
  up: "color:#0f7b3f;",
  down: "color:#b42318;",
  button: "display:inline-block;margin-top:24px;padding:10px 18px;background:#2563eb;" +
    "color:#ffffff;text-decoration:none;border-radius:6px;font-size:14px;",
} as const;

function htmlPage(title: string, subtitle: string, inner: string, dashboardUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="${STYLE.body}"><div style="${STYLE.card}">
<h1 style="${STYLE.h1}">${escapeHtml(title)}</h1>
<p style="${STYLE.muted}">${escapeHtml(subtitle)}</p>
${inner}
<a href="${escapeHtml(dashboardUrl)}" style="${STYLE.button}">Open the dashboard</a>
</div></body></html>
`;
}

function htmlTable(title: string, head: [string, string], rows: [string, string][]): string {
  const body = rows.length === 0
    ? `<tr><td style="${STYLE.cell}" colspan="2">No data in this period</td></tr>`
    : rows.map(([name, value]) =>
      `<tr><td style="${STYLE.cell}">${escapeHtml(name)}</td>` +
      `<td style="${STYLE.number}">${escapeHtml(value)}</td></tr>`
    ).join("\n");
  return `<h2 style="${STYLE.h2}">${escapeHtml(title)}</h2>
<table role="presentation" style="${STYLE.table}">
<tr><th style="${STYLE.cell}text-align:left;">${escapeHtml(head[0])}</th>` +
    `<th style="${STYLE.number}">${escapeHtml(head[1])}</th></tr>
${body}
</table>`;
}

/** Whether a change is good news: more of everything, except a higher bounce rate. */
function goodChange(line: MetricLine): boolean | null {
  if (line.change === null || line.change === 0) return null;
  return line.metric === "bounce_rate" ? line.change < 0 : line.change > 0;
}

/** The email report of one period. */
export function reportMail(facts: ReportFacts): Mail {
  const { numbers } = facts;
  const kind = facts.every === "week" ? "Weekly" : "Monthly";
  const period = periodText(facts.every, facts.first, facts.last);
  const before = periodText(facts.every, facts.previousFirst, facts.previousLast);
  const subject = oneLine(`${facts.siteName}: ${kind.toLowerCase()} report, ${period}`);
  const title = `${facts.siteName}: ${kind.toLowerCase()} report`;
  const subtitle = `${period} (${facts.timeZone}), compared with ${before}`;
  const sources = numbers.sources.map((s) =>
    [sourceName(s.source), count.format(s.visitors)] as [string, string]
  );
  const pages = numbers.pages.map((p) => [p.page, count.format(p.pageviews)] as [string, string]);

  const labelWidth = Math.max(...REPORT_METRICS.map((m) => LABELS[m].length)) + 3;
  const valueWidth = Math.max(...numbers.metrics.map((l) => metricValue(l).length)) + 3;
  const text = `${title}\n${subtitle}\n\n` +
    numbers.metrics.map((l) =>
      `${pad(LABELS[l.metric], labelWidth)}${pad(metricValue(l), valueWidth)}${changeText(l)}`
    ).join("\n") + "\n\n" +
    textTable("Top sources (visitors)", sources, "No visits in this period") + "\n" +
    textTable("Top pages (page views)", pages, "No page views in this period") + "\n" +
    `Open the dashboard: ${facts.dashboardUrl}\n`;

  const metricRows = numbers.metrics.map((l) => {
    const good = goodChange(l);
    const style = good === null ? "" : good ? STYLE.up : STYLE.down;
    return `<tr><td style="${STYLE.cell}">${LABELS[l.metric]}</td>` +
      `<td style="${STYLE.number}"><strong>${escapeHtml(metricValue(l))}</strong></td>` +
      `<td style="${STYLE.number}${style}">${escapeHtml(changeText(l))}</td></tr>`;
  }).join("\n");
  const inner = `<table role="presentation" style="${STYLE.table}">
<tr><th style="${STYLE.cell}text-align:left;"></th><th style="${STYLE.number}">${period}</th>` +
    `<th style="${STYLE.number}">vs. ${escapeHtml(before)}</th></tr>
${metricRows}
</table>
${htmlTable("Top sources", ["Source", "Visitors"], sources)}
${htmlTable("Top pages", ["Page", "Page views"], pages)}`;
  return { subject, text, html: htmlPage(title, subtitle, inner, facts.dashboardUrl) };
}

export interface AlertFacts {
  siteName: string;
  kind: "spike" | "drop";
  visitors: number;
  threshold: number;
  /** The window counted, in minutes (30 for a spike, 720 for a drop). */
  windowMinutes: number;
  dashboardUrl: string;
}

/** A traffic alert. */
export function alertMail(facts: AlertFacts): Mail {
  const window = facts.windowMinutes % 60 === 0
    ? `${facts.windowMinutes / 60} hours`
    : `${facts.windowMinutes} minutes`;
  const visitors = `${count.format(facts.visitors)} visitor${facts.visitors === 1 ? "" : "s"}`;
  const headline = facts.kind === "spike"
    ? `Traffic spike: ${visitors} in the last ${window}`
    : `Traffic drop: ${visitors} in the last ${window}`;
  const rule = facts.kind === "spike"
    ? `This alert fires when the visitors of the last ${window} reach ${facts.threshold}.`
    : `This alert fires when the visitors of the last ${window} are fewer than ${facts.threshold}.`;
  const once = "It fires at most once every 12 hours.";
  const subject = oneLine(
    `${facts.siteName}: ${headline.charAt(0).toLowerCase()}${headline.slice(1)}`,
  );
  const text = `${facts.siteName}\n${headline}\n\n${rule} ${once}\n\n` +
    `Open the dashboard: ${facts.dashboardUrl}\n`;
  const inner = `<p style="font-size:15px;">${escapeHtml(rule)} ${once}</p>`;
  return { subject, text, html: htmlPage(headline, facts.siteName, inner, facts.dashboardUrl) };
}
