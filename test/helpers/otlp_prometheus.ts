/**
 * OTLP metrics as Prometheus stores them: the OpenTelemetry-to-Prometheus
 * naming rules (the specification's "Prometheus and OpenMetrics
 * Compatibility", as Prometheus' own OTLP receiver and the Collector's
 * Prometheus exporters apply them with unit and type suffixes): the name's
 * dots and other invalid characters become `_`, the unit is appended in
 * words (`s` → `seconds`, `By` → `bytes`, a unit in braces dropped, `1` →
 * `ratio` on gauges), a monotonic sum gains `_total`, a histogram becomes
 * `_bucket` (cumulative, with `le`), `_sum` and `_count`. Attributes become
 * labels the same way; the resource's service.name is `job`,
 * service.instance.id `instance`, and the scope is `otel_scope_name`.
 *
 * Used by the tests that run the docs' PromQL, the alert rules and the
 * dashboards' queries against what a real run exported.
 */
import { attributesOf, type OtlpJson } from "./otlp_receiver.ts";

export interface Series {
  name: string;
  labels: Record<string, string>;
  /** Values by export, in order; undefined where the series had no point yet. */
  values: (number | undefined)[];
}

const UNIT_WORDS: Record<string, string> = {
  d: "days",
  h: "hours",
  min: "minutes",
  s: "seconds",
  ms: "milliseconds",
  us: "microseconds",
  ns: "nanoseconds",
  By: "bytes",
  KiBy: "kibibytes",
  MiBy: "mebibytes",
  "%": "percent",
};

export type MetricKind = "counter" | "gauge" | "histogram";

/** The word a unit adds to a name ("" for none); `1` is `ratio` on gauges only. */
export function unitSuffix(unit: string | undefined, kind: MetricKind): string {
  const plain = (unit ?? "").replace(/\{[^}]*\}/g, "").trim();
  if (plain === "") return "";
  if (plain === "1") return kind === "gauge" ? "ratio" : "";
  const [main, per] = plain.split("/");
  const word = (u: string) => UNIT_WORDS[u] ?? u;
  const words = [main ? word(main) : "", per ? `per_${word(per)}` : ""].filter(Boolean);
  return words.join("_").replace(/[^a-zA-Z0-9_]/g, "_");
}

/** The Prometheus name of an OTLP metric. */
export function prometheusName(name: string, unit: string | undefined, kind: MetricKind): string {
  const tokens = name.split(/[^a-zA-Z0-9:]+/).filter(Boolean);
  const suffix = unitSuffix(unit, kind);
  if (suffix && !tokens.join("_").endsWith(suffix)) tokens.push(suffix);
  if (kind === "counter") {
    if (tokens[tokens.length - 1] === "total") tokens.pop();
    tokens.push("total");
  }
  return tokens.join("_");
}

/** The Prometheus label name of an attribute key. */
export function labelName(key: string): string {
  const name = key.replace(/[^a-zA-Z0-9_]/g, "_");
  return /^[0-9]/.test(name) ? `key_${name}` : name;
}

function labelsOf(
  resource: Record<string, string>,
  scope: string,
  attributes: OtlpJson[] | undefined,
): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributesOf(attributes))) {
    labels[labelName(key)] = value;
  }
  const service = resource["service.name"];
  const namespace = resource["service.namespace"];
  if (service) labels.job = namespace ? `${namespace}/${service}` : service;
  if (resource["service.instance.id"]) labels.instance = resource["service.instance.id"];
  labels.otel_scope_name = scope;
  return labels;
}

const key = (name: string, labels: Record<string, string>) =>
  name + JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

const CUMULATIVE = 2;

/**
 * Every series the exports hold, with one value per export (the exports
 * are taken as evenly spaced scrapes). Only cumulative data is accepted,
 * which is what Deno's exporter sends.
 */
export function prometheusSeries(exports: OtlpJson[]): Series[] {
  const all = new Map<string, Series>();
  const set = (
    name: string,
    labels: Record<string, string>,
    index: number,
    value: number,
  ) => {
    const id = key(name, labels);
    let series = all.get(id);
    if (!series) {
      series = { name, labels, values: [] };
      all.set(id, series);
    }
    series.values[index] = value;
  };
  exports.forEach((body, index) => {
    for (const rm of body.resourceMetrics ?? []) {
      const resource = attributesOf(rm.resource?.attributes);
      for (const sm of rm.scopeMetrics ?? []) {
        const scope = sm.scope?.name ?? "";
        for (const metric of sm.metrics ?? []) {
          if (metric.histogram) {
            if (metric.histogram.aggregationTemporality !== CUMULATIVE) {
              throw new Error(`${metric.name}: only cumulative histograms are converted`);
            }
            const base = prometheusName(metric.name, metric.unit, "histogram");
            for (const point of metric.histogram.dataPoints ?? []) {
              const labels = labelsOf(resource, scope, point.attributes);
              const bounds: number[] = point.explicitBounds ?? [];
              const counts: number[] = (point.bucketCounts ?? []).map(Number);
              let running = 0;
              bounds.forEach((bound, i) => {
                running += counts[i] ?? 0;
                set(`${base}_bucket`, { ...labels, le: String(bound) }, index, running);
              });
              set(`${base}_bucket`, { ...labels, le: "+Inf" }, index, Number(point.count));
              set(`${base}_sum`, labels, index, Number(point.sum ?? 0));
              set(`${base}_count`, labels, index, Number(point.count));
            }
          } else if (metric.sum || metric.gauge) {
            const monotonic = metric.sum?.isMonotonic === true;
            if (metric.sum && metric.sum.aggregationTemporality !== CUMULATIVE) {
              throw new Error(`${metric.name}: only cumulative sums are converted`);
            }
            // A sum that is not monotonic (an up-down counter) is a gauge.
            const kind: MetricKind = monotonic ? "counter" : "gauge";
            const name = prometheusName(metric.name, metric.unit, kind);
            for (const point of (metric.sum ?? metric.gauge).dataPoints ?? []) {
              const value = Number(point.asDouble ?? point.asInt ?? 0);
              set(name, labelsOf(resource, scope, point.attributes), index, value);
            }
          }
        }
      }
    }
  });
  return [...all.values()];
}

/** The `series` selector promtool's input_series takes: `name{a="b",...}`. */
export function seriesSelector(series: Pick<Series, "name" | "labels">): string {
  const labels = Object.entries(series.labels).sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${series.name}{${labels.join(",")}}`;
}

/** promtool's expanding notation of one value a step: `_` where there was none. */
export function promtoolValues(values: (number | undefined)[], steps: number): string {
  return Array.from({ length: steps }, (_, i) => values[i] === undefined ? "_" : String(values[i]))
    .join(" ");
}

/**
 * The metric names a PromQL expression reads: what remains once label
 * matchers, range selectors, grouping clauses, strings, numbers, functions
 * and keywords are taken out.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\b\d+(\.\d+)?([eE][+-]?\d+)?(ms|s|m|h|d|w|y)?\b/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const rest = stripped.slice(match.index! + match[0].length);
    if (/^\s*\(/.test(rest)) continue; // a function or aggregation
    if (KEYWORDS.has(match[0])) continue;
    if (/^\d/.test(match[0])) continue;
    names.add(match[0]);
  }
  return [...names];
}

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "inf",
  "nan",
  "Inf",
  "NaN",
]);
