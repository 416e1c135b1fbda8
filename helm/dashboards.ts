/**
 * The Grafana dashboards the umbrella chart ships (helm/crm/monitoring/
 * dashboards/, a ConfigMap for Grafana's sidecar when
 * monitoring.dashboards.enabled), built with Grafana's typed builders. Every
 * query reads the Prometheus names of the metrics the system exports
 * (docs/observability.md); `deno task monitoring` writes the JSON and a test
 * checks each query's metric names against what a real run exported.
 */
import {
  DashboardBuilder,
  type DataSourceRef,
  DatasourceVariableBuilder,
  RowBuilder,
} from "@grafana/grafana-foundation-sdk/dashboard";
import {
  LegendDisplayMode,
  LegendPlacement,
  VizLegendOptionsBuilder,
} from "@grafana/grafana-foundation-sdk/common";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder } from "@grafana/grafana-foundation-sdk/timeseries";

const DATASOURCE: DataSourceRef = { type: "prometheus", uid: "${datasource}" };
/** The gateway's own request histogram, not the runtime's of the same name. */
const GATEWAY = 'otel_scope_name="crm"';
const RATE = "$__rate_interval";

interface Query {
  expr: string;
  legend: string;
}

function panel(title: string, unit: string, queries: Query[], description = ""): PanelBuilder {
  const builder = new PanelBuilder()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(DATASOURCE)
    .height(8)
    .span(12)
    .legend(
      new VizLegendOptionsBuilder().showLegend(true).displayMode(LegendDisplayMode.List)
        .placement(LegendPlacement.Bottom).calcs([]),
    );
  for (const [i, query] of queries.entries()) {
    builder.withTarget(
      new DataqueryBuilder()
        .refId(String.fromCharCode(65 + i))
        .datasource(DATASOURCE)
        .expr(query.expr)
        .legendFormat(query.legend),
    );
  }
  return builder;
}

function dashboard(uid: string, title: string, description: string): DashboardBuilder {
  return new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(["crm"])
    .editable()
    .refresh("1m")
    .time({ from: "now-6h", to: "now" })
    .timezone("browser")
    .withVariable(
      new DatasourceVariableBuilder("datasource").label("Data source").type("prometheus"),
    );
}

const quantile = (q: number, metric: string, selector: string, by: string) =>
  `histogram_quantile(${q}, sum by (le, ${by}) (rate(${metric}_bucket{${selector}}[${RATE}])))`;

function routes() {
  const duration = "http_server_request_duration_seconds";
  return dashboard(
    "crm-routes",
    "CRM / Routes",
    "Per-route traffic, errors and latency of the gateways, and what they know of their backends",
  )
    .withRow(new RowBuilder("Traffic"))
    .withPanel(panel("Requests per second by route", "reqps", [{
      expr: `sum by (http_route) (rate(${duration}_count{${GATEWAY}}[${RATE}]))`,
      legend: "{{http_route}}",
    }]))
    .withPanel(panel("Server errors (5xx) by route", "percentunit", [{
      expr: `sum by (http_route) (rate(${duration}_count{${GATEWAY}, ` +
        `http_response_status_code=~"5.."}[${RATE}])) / sum by (http_route) ` +
        `(rate(${duration}_count{${GATEWAY}}[${RATE}]))`,
      legend: "{{http_route}}",
    }], "Share of each route's answers that were 5xx"))
    .withPanel(panel("Answers by status class", "reqps", [{
      expr: `sum by (status) (label_replace(rate(${duration}_count{${GATEWAY}}[${RATE}]), ` +
        `"status", "\${1}xx", "http_response_status_code", "([0-9]).."))`,
      legend: "{{status}}",
    }]))
    .withPanel(panel("Refused by the gateway", "reqps", [
      {
        expr: `sum by (crm_refusal) (rate(crm_gateway_refused_total[${RATE}]))`,
        legend: "{{crm_refusal}}",
      },
      {
        expr: `sum by (http_route) (rate(crm_gateway_rate_limited_total[${RATE}]))`,
        legend: "429 {{http_route}}",
      },
    ], "Load bounds (503 overloaded, 414, 431) and rate limits (429)"))
    .withRow(new RowBuilder("Latency"))
    .withPanel(panel("p99 latency by route", "s", [{
      expr: quantile(0.99, duration, GATEWAY, "http_route"),
      legend: "{{http_route}}",
    }]))
    .withPanel(panel("p50 latency by route", "s", [{
      expr: quantile(0.5, duration, GATEWAY, "http_route"),
      legend: "{{http_route}}",
    }]))
    .withRow(new RowBuilder("Backends"))
    .withPanel(panel("Backends serving, by gateway", "short", [{
      expr: "min by (crm_backend) (crm_gateway_backend_serving)",
      legend: "{{crm_backend}}",
    }], "1 while every gateway's health poll finds the backend SERVING"));
}

function rpcs() {
  const duration = "rpc_server_call_duration_seconds";
  return dashboard("crm-rpcs", "CRM / RPCs", "Internal Connect/gRPC calls, by service and method")
    .withPanel(panel("Calls per second by method", "reqps", [{
      expr: `sum by (rpc_service, rpc_method) (rate(${duration}_count[${RATE}]))`,
      legend: "{{rpc_service}}/{{rpc_method}}",
    }]))
    .withPanel(panel("Failed calls by method and code", "reqps", [{
      expr: `sum by (rpc_method, rpc_connect_rpc_error_code) ` +
        `(rate(${duration}_count{rpc_connect_rpc_error_code!="OK"}[${RATE}]))`,
      legend: "{{rpc_method}} {{rpc_connect_rpc_error_code}}",
    }], "Refusals of the caller's input (invalid_argument, ...) included"))
    .withPanel(panel("p99 latency by method", "s", [{
      expr: quantile(0.99, duration, "", "rpc_service, rpc_method"),
      legend: "{{rpc_service}}/{{rpc_method}}",
    }]))
    .withPanel(panel("p50 latency by method", "s", [{
      expr: quantile(0.5, duration, "", "rpc_service, rpc_method"),
      legend: "{{rpc_service}}/{{rpc_method}}",
    }]));
}

function ingest() {
  return dashboard(
    "crm-ingest",
    "CRM / Ingest pipeline",
    "From the gateway's batches to the group commits: sizes, latency, outcomes and refusals",
  )
    .withPanel(panel("Gateway batch size (items per ingest call)", "short", [
      { expr: quantile(0.5, "crm_gateway_batch_items", "", "job"), legend: "p50 {{job}}" },
      { expr: quantile(0.99, "crm_gateway_batch_items", "", "job"), legend: "p99 {{job}}" },
    ]))
    .withPanel(panel("Group-commit size (items per transaction)", "short", [
      { expr: quantile(0.5, "crm_ingest_commit_items", "", "job"), legend: "p50 {{job}}" },
      { expr: quantile(0.99, "crm_ingest_commit_items", "", "job"), legend: "p99 {{job}}" },
    ]))
    .withPanel(panel("Commit latency", "s", [
      {
        expr: quantile(0.5, "crm_ingest_commit_duration_seconds", "", "job"),
        legend: "p50 {{job}}",
      },
      {
        expr: quantile(0.99, "crm_ingest_commit_duration_seconds", "", "job"),
        legend: "p99 {{job}}",
      },
    ]))
    .withPanel(panel("Failed commits", "ops", [{
      expr: `sum by (error_type) ` +
        `(rate(crm_ingest_commit_duration_seconds_count{error_type!=""}[${RATE}]))`,
      legend: "{{error_type}}",
    }]))
    .withPanel(panel("Items by outcome", "ops", [{
      expr: `sum by (crm_ingest_kind, crm_ingest_outcome) (rate(crm_ingest_items_total[${RATE}]))`,
      legend: "{{crm_ingest_kind}} {{crm_ingest_outcome}}",
    }]))
    .withPanel(panel("Refusals by reason", "ops", [{
      expr: `sum by (crm_ingest_reason) ` +
        `(rate(crm_ingest_items_total{crm_ingest_outcome="refused"}[${RATE}]))`,
      legend: "{{crm_ingest_reason}}",
    }]));
}

function caches() {
  return dashboard(
    "crm-caches",
    "CRM / Caches and pools",
    "Cache hit ratios, the database pools and the Redis fallback",
  )
    .withPanel(panel("Cache hit ratio", "percentunit", [{
      expr: `sum by (crm_cache_name) (rate(crm_cache_lookups_total{crm_cache_result!="miss"}` +
        `[${RATE}])) / sum by (crm_cache_name) (rate(crm_cache_lookups_total[${RATE}]))`,
      legend: "{{crm_cache_name}}",
    }], "Hits and shared answers (one lookup serving many callers) over all lookups"))
    .withPanel(panel("Cache lookups by result", "ops", [{
      expr: `sum by (crm_cache_name, crm_cache_result) (rate(crm_cache_lookups_total[${RATE}]))`,
      legend: "{{crm_cache_name}} {{crm_cache_result}}",
    }]))
    .withPanel(panel("Database connections", "short", [
      {
        expr: "sum by (job, db_client_connection_state) (db_client_connection_count)",
        legend: "{{job}} {{db_client_connection_state}}",
      },
      { expr: "sum by (job) (db_client_connection_max)", legend: "{{job}} max" },
    ]))
    .withPanel(panel("Statements waiting for a connection", "short", [{
      expr: "sum by (job) (db_client_connection_pending_requests)",
      legend: "{{job}}",
    }]))
    .withPanel(panel("Gateways on the Redis fallback", "short", [{
      expr: "sum(crm_redis_fallback)",
      legend: "gateways",
    }], "Rate limits on in-process windows because Redis failed"));
}

/** Every dashboard by file name. */
export function dashboards(): Record<string, unknown> {
  return {
    "crm-routes.json": routes().build(),
    "crm-rpcs.json": rpcs().build(),
    "crm-ingest.json": ingest().build(),
    "crm-caches.json": caches().build(),
  };
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** Every query of a dashboard, with its panel's title. */
export function panelQueries(dashboard: Json): { panel: string; expr: string }[] {
  return (dashboard.panels ?? []).flatMap((p: Json) =>
    (p.targets ?? []).map((t: Json) => ({ panel: p.title, expr: t.expr }))
  );
}
