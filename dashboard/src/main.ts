/// <reference lib="dom" />
/**
 * The reports page (GET /dashboard/): sign in with a report key, kept in
 * this tab's session storage and sent only as the x-report-key header; the
 * Traffic, Events and Ad channels reports of POST /stats/v1/query with a
 * date range, a chart over time (uPlot, bundled) and breakdown tables, each
 * downloadable as CSV. Every value reaches the page through textContent:
 * stored URLs and titles come from the internet.
 */
import uPlot from "uplot";
import { csvOf, formatMetric, type Metric, type Row } from "./format.ts";

const KEY_STORE = "crm_report_key";
const REPORT_KEY = /^rk_[0-9a-f]{48}$/;

interface Answer {
  results: { dimensions: (string | null)[]; metrics: Metric[] }[];
  meta: { timeZone: string; dateRange: [string, string]; totalRows: number };
}

class SignedOut extends Error {}

async function query(body: Record<string, unknown>): Promise<Answer> {
  const key = sessionStorage.getItem(KEY_STORE) ?? "";
  const answer = await fetch("/stats/v1/query", {
    method: "POST",
    headers: { "content-type": "application/json", "x-report-key": key },
    body: JSON.stringify(body),
  });
  if (answer.status === 401) throw new SignedOut("invalid_key");
  const json = await answer.json();
  if (!answer.ok) throw new Error(`${json.message}${json.problem ? `: ${json.problem}` : ""}`);
  return json;
}

/** An element with text content only (never HTML). */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child); // strings become text nodes
  return node;
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

type Report = "traffic" | "events" | "ads";
const state = { report: "traffic" as Report, breakdown: "visit:channel" };

function dateRange(): string | [string, string] {
  const choice = byId<HTMLSelectElement>("range").value;
  if (choice !== "custom") return choice;
  return [byId<HTMLInputElement>("from").value, byId<HTMLInputElement>("to").value];
}

function timeDimension(range: string | [string, string]): string {
  if (range === "today" || range === "yesterday") return "time:hour";
  if (range === "year" || range === "all") return "time:month";
  return "time:day";
}

let chart: uPlot | undefined;

function contentWidth(element: HTMLElement): number {
  const style = getComputedStyle(element);
  return element.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

function drawChart(labels: string[], series: { label: string; values: number[] }[]) {
  const box = byId("chart");
  chart?.destroy();
  box.replaceChildren();
  if (labels.length === 0) {
    box.append(el("p", { class: "empty" }, "No data in this range."));
    return;
  }
  const colors = ["#2563eb", "#16a34a", "#d97706", "#9333ea"];
  chart = new uPlot(
    {
      // The box's width inside its padding (clientWidth counts the padding): the chart and its
      // legend then end where the card does.
      width: Math.max(320, contentWidth(box)),
      height: 260,
      scales: { x: { time: false } },
      axes: [{ values: (_u, ticks) => ticks.map((i) => labels[Math.round(i)] ?? "") }, {}],
      series: [
        { label: "bucket", value: (_u, i) => labels[Math.round(i)] ?? "" },
        ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2 })),
      ],
    },
    [labels.map((_, i) => i), ...series.map((s) => s.values)],
    box,
  );
}

function drawTable(title: string, headers: string[], rows: Row[]) {
  const table = el("table", { "data-testid": "breakdown" });
  table.append(el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))));
  const body = el("tbody");
  for (const row of rows) {
    body.append(
      el("tr", {}, ...row.map((cell, i) => el("td", i === 0 ? {} : { class: "num" }, cell))),
    );
  }
  if (rows.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: String(headers.length) }, "No data.")));
  }
  table.append(body);
  const download = el("button", { type: "button", "data-testid": "csv" }, "Download CSV");
  download.addEventListener("click", () => {
    const blob = new Blob([csvOf(headers, rows)], { type: "text/csv" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `${title}.csv` });
    link.click();
    URL.revokeObjectURL(link.href);
  });
  byId("tables").replaceChildren(el("h2", {}, title), download, table);
}

function drawSummary(names: string[], metrics: Metric[]) {
  byId("summary").replaceChildren(
    ...names.map((name, i) =>
      el(
        "div",
        { class: "card" },
        el("span", { class: "label" }, name.replace(/_/g, " ")),
        el("strong", { "data-metric": name }, formatMetric(name, metrics[i])),
      )
    ),
  );
}

function seriesOf(answer: Answer, count: number) {
  const labels = answer.results.map((r) => r.dimensions[0] ?? "");
  return {
    labels,
    values: Array.from(
      { length: count },
      (_, m) =>
        answer.results.map((r) => (typeof r.metrics[m] === "number" ? r.metrics[m] as number : 0)),
    ),
  };
}

async function traffic(range: string | [string, string]) {
  const metrics = ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"];
  const [total, overTime, breakdown] = await Promise.all([
    query({ metrics, date_range: range }),
    query({
      metrics: ["visitors", "visits", "pageviews"],
      date_range: range,
      dimensions: [timeDimension(range)],
    }),
    query({ metrics, date_range: range, dimensions: [state.breakdown], limit: 100 }),
  ]);
  showZone(total);
  drawSummary(metrics, total.results[0].metrics);
  const { labels, values } = seriesOf(overTime, 3);
  drawChart(
    labels,
    ["visitors", "visits", "pageviews"].map((label, i) => ({ label, values: values[i] })),
  );
  drawTable(
    `traffic by ${state.breakdown}`,
    [state.breakdown, ...metrics],
    breakdown.results.map((
      r,
    ) => [r.dimensions[0] ?? "(none)", ...r.metrics.map((m, i) => formatMetric(metrics[i], m))]),
  );
}

async function events(range: string | [string, string]) {
  const [total, overTime, byName] = await Promise.all([
    query({ metrics: ["events", "revenue"], date_range: range }),
    query({ metrics: ["events"], date_range: range, dimensions: [timeDimension(range)] }),
    query({
      metrics: ["events", "revenue"],
      date_range: range,
      dimensions: ["event:name"],
      limit: 100,
    }),
  ]);
  showZone(total);
  drawSummary(["events", "revenue"], total.results[0].metrics);
  const { labels, values } = seriesOf(overTime, 1);
  drawChart(labels, [{ label: "events", values: values[0] }]);
  const named = byName.results.filter((r) => r.dimensions[0] !== null);
  const conversions = await Promise.all(named.map((r) =>
    query({
      metrics: ["conversion_rate"],
      date_range: range,
      filters: [["is", "event:name", [r.dimensions[0]]]],
    })
  ));
  drawTable(
    "events",
    ["event:name", "events", "revenue", "conversion_rate"],
    named.map((r, i) => [
      r.dimensions[0]!,
      formatMetric("events", r.metrics[0]),
      formatMetric("revenue", r.metrics[1]),
      formatMetric("conversion_rate", conversions[i].results[0].metrics[0]),
    ]),
  );
}

async function ads(range: string | [string, string]) {
  const metrics = ["visits", "events", "leads", "revenue"];
  const [total, overTime, byLink] = await Promise.all([
    query({ metrics, date_range: range, filters: [["contains", "visit:ad_link", [""]]] }),
    query({
      metrics: ["visits"],
      date_range: range,
      dimensions: [timeDimension(range)],
      filters: [["contains", "visit:ad_link", [""]]],
    }),
    query({ metrics, date_range: range, dimensions: ["visit:ad_link"], limit: 100 }),
  ]);
  showZone(total);
  drawSummary(metrics, total.results[0].metrics);
  const { labels, values } = seriesOf(overTime, 1);
  drawChart(labels, [{ label: "visits from ad links", values: values[0] }]);
  drawTable(
    "ad channels",
    ["visit:ad_link", ...metrics],
    byLink.results.filter((r) => r.dimensions[0] !== null)
      .map((r) => [r.dimensions[0]!, ...r.metrics.map((m, i) => formatMetric(metrics[i], m))]),
  );
}

function showZone(answer: Answer) {
  const [from, to] = answer.meta.dateRange;
  byId("zone").textContent = `${from} to ${to}, ${answer.meta.timeZone}`;
}

async function refresh() {
  const range = dateRange();
  byId("breakdown-choice").hidden = state.report !== "traffic";
  for (const tab of document.querySelectorAll<HTMLButtonElement>("[data-report]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.report === state.report));
  }
  byId("status").textContent = "Loading…";
  try {
    if (state.report === "traffic") await traffic(range);
    else if (state.report === "events") await events(range);
    else await ads(range);
    byId("status").textContent = "";
  } catch (error) {
    if (error instanceof SignedOut) return signOut("That report key is not valid (any more).");
    byId("status").textContent = `Could not load the report: ${(error as Error).message}`;
  }
}

function signOut(message = "") {
  sessionStorage.removeItem(KEY_STORE);
  byId("app").hidden = true;
  byId("signin").hidden = false;
  byId("signin-error").textContent = message;
}

function start() {
  byId("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = byId<HTMLInputElement>("key").value.trim();
    if (!REPORT_KEY.test(key)) {
      byId("signin-error").textContent = "A report key is rk_ followed by 48 hex characters.";
      return;
    }
    sessionStorage.setItem(KEY_STORE, key);
    byId<HTMLInputElement>("key").value = "";
    try {
      await query({ metrics: ["visitors"], date_range: "today" });
    } catch (error) {
      return signOut(error instanceof SignedOut ? "That report key is not valid." : String(error));
    }
    byId("signin").hidden = true;
    byId("app").hidden = false;
    await refresh();
  });
  byId("signout").addEventListener("click", () => signOut());
  for (const tab of document.querySelectorAll<HTMLButtonElement>("[data-report]")) {
    tab.addEventListener("click", () => {
      state.report = tab.dataset.report as Report;
      refresh();
    });
  }
  byId("range").addEventListener("change", () => {
    byId("custom").hidden = byId<HTMLSelectElement>("range").value !== "custom";
    if (byId<HTMLSelectElement>("range").value !== "custom") refresh();
  });
  byId("custom").addEventListener("change", () => {
    if (byId<HTMLInputElement>("from").value && byId<HTMLInputElement>("to").value) refresh();
  });
  byId("breakdown").addEventListener("change", () => {
    state.breakdown = byId<HTMLSelectElement>("breakdown").value;
    refresh();
  });
  if (sessionStorage.getItem(KEY_STORE)) {
    byId("signin").hidden = true;
    byId("app").hidden = false;
    refresh();
  }
}

start();
