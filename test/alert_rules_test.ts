/**
 * The chart's alert rules (helm/crm/monitoring/), proven with promtool:
 * `promtool check rules` on both files, then `promtool test rules` with,
 * for every alert, series that should fire it and series that should not.
 * The SLO alerts are driven by the request histogram at a rate of errors
 * (or slow answers) above and below their burn-rate thresholds; the cause
 * alerts by their own metrics. Every alert names a runbook that exists.
 */
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { haveTools, tool } from "./helpers/tools.ts";
import { runCommand } from "./helpers/process.ts";
import { ALERT_RULES, SLO_RULES, SLO_SPEC } from "../helm/monitoring.ts";

const ROOT = new URL("..", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Json = any;

interface Slo {
  name: string;
  objective: number;
  alerting: { name: string; annotations: { runbook_url: string } };
}

/** A route label set each SLO's selectors match. */
const ROUTES: Record<string, Record<string, string>> = {
  "content-read": { http_request_method: "GET", http_route: "/content/v1/pages/:marker" },
  "event-ingest": { http_request_method: "POST", http_route: "/marketing/event" },
  reports: { http_request_method: "POST", http_route: "/stats/v1/query" },
};
const LATENCY_BOUND: Record<string, string> = {
  "content-read": "0.1",
  "event-ingest": "0.25",
  reports: "2.5",
};

/** `name{labels}` */
const selector = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`;

/** A counter growing by `perMinute` each step of 1m, for `minutes` steps. */
const growing = (perMinute: number, minutes: number) => `0+${perMinute}x${minutes}`;

const MINUTES = 70;
const REQUESTS = 1000;

/**
 * Input series for one SLO where a share `bad` of the requests fail (or,
 * for a latency SLO, answer above the bound), steady for MINUTES.
 */
function sloSeries(slo: string, kind: "availability" | "latency", bad: number) {
  const labels = { otel_scope_name: "crm", job: "crm-gateway", ...ROUTES[slo] };
  const name = "http_server_request_duration_seconds";
  const failing = Math.round(REQUESTS * bad);
  if (kind === "availability") {
    return [
      {
        series: selector(`${name}_count`, { ...labels, http_response_status_code: "200" }),
        values: growing(REQUESTS - failing, MINUTES),
      },
      {
        series: selector(`${name}_count`, { ...labels, http_response_status_code: "500" }),
        values: growing(failing, MINUTES),
      },
    ];
  }
  const ok = { ...labels, http_response_status_code: "200" };
  return [
    { series: selector(`${name}_count`, ok), values: growing(REQUESTS, MINUTES) },
    {
      series: selector(`${name}_bucket`, { ...ok, le: LATENCY_BOUND[slo] }),
      values: growing(REQUESTS - failing, MINUTES),
    },
    {
      series: selector(`${name}_bucket`, { ...ok, le: "+Inf" }),
      values: growing(REQUESTS, MINUTES),
    },
  ];
}

function sloTests(slos: Slo[]) {
  return slos.flatMap((slo) => {
    const [, route, kind] = /^(.+)-(availability|latency)$/.exec(slo.name)!;
    const budget = 1 - slo.objective / 100;
    const alert = slo.alerting.name;
    const expect = (severity: string) => ({
      exp_labels: {
        severity,
        sloth_severity: severity,
        sloth_id: `crm-${slo.name}`,
        sloth_service: "crm",
        sloth_slo: slo.name,
        category: kind,
        owner: "crm",
      },
    });
    const test = (bad: number, alerts: Json[]) => ({
      interval: "1m",
      input_series: sloSeries(route, kind as "availability" | "latency", bad),
      alert_rule_test: [{ eval_time: `${MINUTES}m`, alertname: alert, exp_alerts: alerts }],
    });
    return [
      // 20 times the budget's rate: past 14.4 (page) and 3 (ticket).
      test(budget * 20, [expect("page"), expect("ticket")]),
      // 4 times: under 6 (no page on 30m/6h nor 14.4 on 5m/1h), over 3 (ticket).
      test(budget * 4, [expect("ticket")]),
      // Half the budget's rate: the budget would last the period, nothing fires.
      test(budget * 0.5, []),
    ];
  });
}

/** The cause alerts: what fires each, and what does not. */
function causeTests() {
  const gateway = { job: "crm-gateway", instance: "pod-a" };
  const backend = (value: string) => [{
    series: selector("crm_gateway_backend_serving", { ...gateway, crm_backend: "ingest" }),
    values: value,
  }];
  const fallback = (value: string) => [{
    series: selector("crm_redis_fallback", { ...gateway, crm_redis_user: "rate_limits" }),
    values: value,
  }];
  const commits = (failedPerMinute: number) => [
    {
      series: selector("crm_ingest_commit_duration_seconds_count", { job: "crm-ingest" }),
      values: growing(100, 30),
    },
    {
      series: selector("crm_ingest_commit_duration_seconds_count", {
        job: "crm-ingest",
        error_type: "PostgresError",
      }),
      values: growing(failedPerMinute, 30),
    },
  ];
  const pending = (value: string) => [{
    series: selector("db_client_connection_pending_requests", {
      job: "crm-ingest",
      instance: "pod-b",
      db_client_connection_pool_name: "crm",
    }),
    values: value,
  }];
  const at = (minutes: number, alertname: string, input: Json[], alerts: Json[]) => ({
    interval: "1m",
    input_series: input,
    alert_rule_test: [{ eval_time: `${minutes}m`, alertname, exp_alerts: alerts }],
  });
  return [
    at(10, "CrmBackendNotServing", backend("1 1 0x10"), [
      { exp_labels: { ...gateway, crm_backend: "ingest", severity: "page", category: "cause" } },
    ]),
    // Away for one minute only: shorter than the alert's 2 minutes.
    at(10, "CrmBackendNotServing", backend("1x5 0 1x5"), []),
    at(10, "CrmRedisFallback", fallback("0 0 1x10"), [
      { exp_labels: { ...gateway, severity: "ticket", category: "cause" } },
    ]),
    at(10, "CrmRedisFallback", fallback("0x10"), []),
    at(20, "CrmIngestCommitFailures", commits(5), [
      { exp_labels: { job: "crm-ingest", severity: "page", category: "cause" } },
    ]),
    // 1 in 101: under the 1% threshold.
    at(20, "CrmIngestCommitFailures", commits(0.5), []),
    at(20, "CrmDatabasePoolSaturated", pending("3x20"), [{
      exp_labels: {
        job: "crm-ingest",
        instance: "pod-b",
        db_client_connection_pool_name: "crm",
        severity: "ticket",
        category: "cause",
      },
    }]),
    // Queued now and then, never for ten minutes on end.
    at(20, "CrmDatabasePoolSaturated", pending("0 3 0 2 0 4 0 1 0 2 0 3 0 1 0 2 0 3 0 1 0"), []),
  ];
}

/** The alerting rules of both files. */
function alertRules(): Json[] {
  return [
    ...parse(Deno.readTextFileSync(SLO_RULES)).groups,
    ...parse(Deno.readTextFileSync(ALERT_RULES)).groups,
  ].flatMap((g: Json) => g.rules).filter((r: Json) => r.alert);
}

/**
 * Each expected alert with the annotations its rule gives it, the label
 * references expanded as Prometheus does (promtool compares them too).
 */
function withAnnotations(tests: Json[]): Json[] {
  const rules = alertRules();
  for (const test of tests) {
    for (const check of test.alert_rule_test) {
      for (const alert of check.exp_alerts) {
        const rule = rules.find((r) =>
          r.alert === check.alertname && r.labels.severity === alert.exp_labels.severity
        );
        alert.exp_annotations = Object.fromEntries(
          Object.entries(rule.annotations as Record<string, string>).map(([k, v]) => [
            k,
            v.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_, name) => alert.exp_labels[name] ?? ""),
          ]),
        );
      }
    }
  }
  return tests;
}

describe.runIf(haveTools("promtool"))("the alert rules", () => {
  const promtool = (args: string[]) => runCommand(tool("promtool")!, args);
  const slos: Slo[] = parse(Deno.readTextFileSync(SLO_SPEC)).slos;

  it("pass promtool check rules", async () => {
    const checked = await promtool(["check", "rules", SLO_RULES.pathname, ALERT_RULES.pathname]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    console.log(`[promtool check rules] ${checked.stdout.trim().replace(/\n\s*/g, "; ")}`);
  });

  it("fire on series that should fire them and stay quiet on series that should not", async () => {
    const dir = await Deno.makeTempDir({ prefix: "crm-rules-" });
    try {
      const tests = withAnnotations([...sloTests(slos), ...causeTests()]);
      const file = `${dir}/rules_test.yaml`;
      await Deno.writeTextFile(
        file,
        stringify({
          rule_files: [SLO_RULES.pathname, ALERT_RULES.pathname],
          evaluation_interval: "1m",
          tests,
        }),
      );
      const tested = await promtool(["test", "rules", file]);
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      const alerts = new Set(tests.flatMap((t) => t.alert_rule_test.map((a: Json) => a.alertname)));
      console.log(
        `[promtool test rules] ${tests.length} cases over ${alerts.size} alerts ` +
          `(${slos.length} SLOs: page and ticket fire, ticket alone, quiet; 4 cause alerts: ` +
          `fire, quiet): ${tested.stdout.trim().split("\n").at(-1)}`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }, 300_000);

  it("name a runbook that exists for every alert", () => {
    const alerts = alertRules();
    expect(alerts.length).toBe(slos.length * 2 + 4);
    for (const rule of alerts) {
      const runbook = rule.annotations?.runbook_url;
      expect(runbook, rule.alert).toMatch(/^docs\/runbooks\/[a-z-]+\.md$/);
      const text = Deno.readTextFileSync(`${ROOT}${runbook}`);
      expect(text, runbook).toContain(rule.alert);
      for (const section of ["## What it means", "## How to confirm", "## What to do"]) {
        expect(text, `${runbook}: ${section}`).toContain(section);
      }
    }
  });
});
