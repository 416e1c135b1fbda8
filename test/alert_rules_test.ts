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
/** The step of the day-long cases' series and evaluations. */
const LONG_INTERVAL = "10m";
const REQUESTS = 1000;

/** The resource attributes the chart sets, as labels: the pod's namespace and the release. */
const SHOP = { k8s_namespace_name: "shop", service_namespace: "crm" };
/** A second release in the same Prometheus. */
const BLOG = { k8s_namespace_name: "blog", service_namespace: "crm-blog" };

/**
 * Input series for one SLO of one release where a share `bad` of its
 * `requests` a minute fail (or, for a latency SLO, answer above the bound),
 * steady for MINUTES.
 */
function sloSeries(
  slo: string,
  kind: "availability" | "latency",
  bad: number,
  release: Record<string, string> = SHOP,
  requests = REQUESTS,
) {
  const labels = {
    otel_scope_name: "crm",
    job: `${release.service_namespace}/crm-gateway`,
    ...release,
    ...ROUTES[slo],
  };
  const name = "http_server_request_duration_seconds";
  const failing = Math.round(requests * bad);
  if (kind === "availability") {
    return [
      {
        series: selector(`${name}_count`, { ...labels, http_response_status_code: "200" }),
        values: growing(requests - failing, MINUTES),
      },
      {
        series: selector(`${name}_count`, { ...labels, http_response_status_code: "500" }),
        values: growing(failing, MINUTES),
      },
    ];
  }
  const ok = { ...labels, http_response_status_code: "200" };
  return [
    { series: selector(`${name}_count`, ok), values: growing(requests, MINUTES) },
    {
      series: selector(`${name}_bucket`, { ...ok, le: LATENCY_BOUND[slo] }),
      values: growing(requests - failing, MINUTES),
    },
    {
      series: selector(`${name}_bucket`, { ...ok, le: "+Inf" }),
      values: growing(requests, MINUTES),
    },
  ];
}

function sloTests(slos: Slo[]) {
  return slos.flatMap((slo) => {
    const [, route, kindName] = /^(.+)-(availability|latency)$/.exec(slo.name)!;
    const kind = kindName as "availability" | "latency";
    const budget = 1 - slo.objective / 100;
    const alert = slo.alerting.name;
    const expect = (severity: string) => ({
      exp_labels: {
        ...SHOP,
        severity,
        sloth_severity: severity,
        sloth_id: `crm-${slo.name}`,
        sloth_service: "crm",
        sloth_slo: slo.name,
        category: kind,
        owner: "crm",
      },
    });
    const test = (input: Json[], alerts: Json[]) => ({
      interval: "1m",
      input_series: input,
      alert_rule_test: [{ eval_time: `${MINUTES}m`, alertname: alert, exp_alerts: alerts }],
    });
    return [
      // 20 times the budget's rate: past 14.4 (page) and 3 (ticket).
      test(sloSeries(route, kind, budget * 20), [expect("page"), expect("ticket")]),
      // 4 times: under 6 (no page on 30m/6h nor 14.4 on 5m/1h), over 3 (ticket).
      test(sloSeries(route, kind, budget * 4), [expect("ticket")]),
      // Half the budget's rate: the budget would last the period, nothing fires.
      test(sloSeries(route, kind, budget * 0.5), []),
      // Beside a healthy release with a hundred times the traffic: summed together the
      // failing one's errors would be 0.2 times the budget's rate; per release it pages.
      test([
        ...sloSeries(route, kind, budget * 20),
        ...sloSeries(route, kind, 0, BLOG, REQUESTS * 100),
      ], [expect("page"), expect("ticket")]),
    ];
  });
}

/** The cause alerts: what fires each, and what does not. */
function causeTests() {
  const gateway = { ...SHOP, job: "crm/crm-gateway", instance: "pod-a" };
  const ingestJob = { ...SHOP, job: "crm/crm-ingest" };
  const cause = (severity: string) => ({ severity, category: "cause" });
  const series = (name: string, labels: Record<string, string>, values: string) => ({
    series: selector(name, labels),
    values,
  });
  const backend = (value: string) => [
    series("crm_gateway_backend_serving", { ...gateway, crm_backend: "ingest" }, value),
  ];
  const fallback = (value: string) => [
    series("crm_redis_fallback", { ...gateway, crm_redis_user: "rate_limits" }, value),
  ];
  const commits = (failedPerMinute: number) => [
    series("crm_ingest_commit_duration_seconds_count", ingestJob, growing(100, 30)),
    series(
      "crm_ingest_commit_duration_seconds_count",
      { ...ingestJob, error_type: "PostgresError" },
      growing(failedPerMinute, 30),
    ),
  ];
  const pool = { ...ingestJob, instance: "pod-b", db_client_connection_pool_name: "crm" };
  const pending = (value: string) => [
    series("db_client_connection_pending_requests", pool, value),
  ];
  const ingestPod = { ...ingestJob, instance: "pod-c" };
  const ahead = (value: string) => [series("crm_ingest_partitions_ahead", ingestPod, value)];
  const staleness = (value: string) => [
    series("crm_ingest_rollups_staleness_seconds", ingestPod, value),
  ];
  // crm_up of each service: `values` by service, every minute present unless told.
  const up = (values: Partial<Record<string, string>>, minutes = 30) =>
    ["gateway", "auth", "content", "ingest"].map((service) =>
      series(
        "crm_up",
        { ...SHOP, job: "crm/crm", instance: "pod-d", crm_service: service },
        values[service] ?? `1x${minutes}`,
      )
    );
  const absent = (service: string, severity: string) => ({
    exp_labels: { crm_service: service, severity, category: "telemetry" },
  });
  const outbox = {
    ...SHOP,
    job: "crm/crm-ingest",
    instance: "pod-e",
    crm_webhooks_outbox: "ingest",
  };
  const overdue = (value: string) => [
    series("crm_webhooks_backlog_overdue_seconds", outbox, value),
  ];
  const age = (value: string) => [series("crm_webhooks_backlog_age_seconds", outbox, value)];
  const webhookLabels = (severity: string) => ({
    exp_labels: {
      ...SHOP,
      job: "crm/crm-ingest",
      crm_webhooks_outbox: "ingest",
      ...cause(severity),
    },
  });
  const job = (name: string, failed: string, started = "0") => [
    series("kube_job_failed", { namespace: "shop", job_name: name, condition: "true" }, failed),
    series("kube_job_status_start_time", { namespace: "shop", job_name: name }, started),
  ];
  const lastRetention = (values: string) => [
    series("crm_ingest_retention_last_success_seconds", ingestPod, values),
  ];
  const at = (minutes: number, alertname: string, input: Json[], alerts: Json[]) => ({
    interval: "1m",
    input_series: input,
    alert_rule_test: [{ eval_time: `${minutes}m`, alertname, exp_alerts: alerts }],
  });
  // The retention alerts look a day back: series every 10 minutes, evaluated at `hours`.
  const day = (hours: number, alertname: string, input: Json[], alerts: Json[]) => ({
    interval: LONG_INTERVAL,
    input_series: input,
    alert_rule_test: [{ eval_time: `${hours}h`, alertname, exp_alerts: alerts }],
  });
  return [
    at(10, "CrmBackendNotServing", backend("1 1 0x10"), [
      { exp_labels: { ...gateway, crm_backend: "ingest", ...cause("page") } },
    ]),
    // Away for one minute only: shorter than the alert's 2 minutes.
    at(10, "CrmBackendNotServing", backend("1x5 0 1x5"), []),
    at(10, "CrmRedisFallback", fallback("0 0 1x10"), [
      { exp_labels: { ...gateway, ...cause("ticket") } },
    ]),
    at(10, "CrmRedisFallback", fallback("0x10"), []),
    at(20, "CrmIngestCommitFailures", commits(5), [{
      exp_labels: { ...ingestJob, ...cause("page") },
    }]),
    // 1 in 101: under the 1% threshold.
    at(20, "CrmIngestCommitFailures", commits(0.5), []),
    at(20, "CrmDatabasePoolSaturated", pending("3x20"), [
      { exp_labels: { ...pool, ...cause("ticket") } },
    ]),
    // Queued now and then, never for ten minutes on end.
    at(20, "CrmDatabasePoolSaturated", pending("0 3 0 2 0 4 0 1 0 2 0 3 0 1 0 2 0 3 0 1 0"), []),
    // Making them failed from the start: none ahead for over an hour.
    at(70, "CrmPartitionsNotAhead", ahead("0x70"), [
      { exp_labels: { ...ingestJob, ...cause("ticket") } },
    ]),
    // A month begins (2 ahead until the hourly check makes the third again); one ahead for
    // half an hour, shorter than the alert's hour.
    at(70, "CrmPartitionsNotAhead", ahead("3x10 2x20 1x30 3x10"), []),
    // The builder never finished a round since it started 7 hours ago.
    at(30, "CrmRollupsStale", staleness("25200+60x30"), [
      { exp_labels: { ...ingestJob, ...cause("ticket") } },
    ]),
    // A round every minute or so.
    at(
      30,
      "CrmRollupsStale",
      staleness("0 60 10 70 5 65 0 60 10 70 5 65 0 60 10 70 5 65 0 60"),
      [],
    ),
    // auth stops sending at minute 5: absent for 10 minutes by minute 16.
    at(20, "CrmTelemetryAbsent", up({ auth: "1x5" }), [absent("auth", "ticket")]),
    // The collector stops at minute 5: every service is absent, the gateway pages.
    at(
      20,
      "CrmTelemetryAbsent",
      up({ gateway: "1x5", auth: "1x5", content: "1x5", ingest: "1x5" }),
      [
        absent("gateway", "page"),
        absent("auth", "ticket"),
        absent("content", "ticket"),
        absent("ingest", "ticket"),
      ],
    ),
    // Three minutes without a sample (a restart): shorter than the alert's 10.
    at(20, "CrmTelemetryAbsent", up({ gateway: "1x5 _x3 1x11" }), []),
    at(20, "CrmWebhooksOverdue", overdue("2000+60x20"), [webhookLabels("ticket")]),
    // Due deliveries claimed within seconds, now and then a minute late.
    at(20, "CrmWebhooksOverdue", overdue("0 1 0 60 2 0 0 1 0 30 0 0 1 0 0 2 0 0 1 0 0"), []),
    at(20, "CrmWebhooksBacklogStuck", age("120000+60x20"), [webhookLabels("ticket")]),
    // A receiver down for a day: its messages are still being retried.
    at(20, "CrmWebhooksBacklogStuck", age("86400+60x20"), []),
    at(10, "CrmMigrationJobFailed", job("crm-migrate", "0 0 1x10"), [
      { exp_labels: { namespace: "shop", job_name: "crm-migrate", ...cause("page") } },
    ]),
    at(10, "CrmMigrationJobFailed", job("crm-migrate", "0x10"), []),
    // A run that started 5 minutes in failed.
    at(10, "CrmRetentionJobFailed", job("crm-retention-29001234", "0x5 1x5", "300x10"), [
      {
        exp_labels: { namespace: "shop", job_name: "crm-retention-29001234", ...cause("ticket") },
      },
    ]),
    // A failed run kept in the CronJob's history, started more than a day ago.
    day(25, "CrmRetentionJobFailed", job("crm-retention-28991234", "1x150", "0x150"), []),
    // The last success at time 0, none since: 27 hours later it is stale.
    day(27, "CrmRetentionStale", lastRetention("0x162"), [
      { exp_labels: { ...SHOP, ...cause("ticket") } },
    ]),
    // Daily successes (the gauge steps once a day).
    day(27, "CrmRetentionStale", lastRetention("0x143 86400x19"), []),
    // Ingest has reported for 27 hours, and retention never succeeded.
    day(27, "CrmRetentionNeverSucceeded", up({}, 162), [
      { exp_labels: { ...SHOP, ...cause("ticket") } },
    ]),
    // The same with a success after 10 hours.
    day(27, "CrmRetentionNeverSucceeded", [...up({}, 162), ...lastRetention("_x60 36000x102")], []),
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
 * One SLO's groups of the SLO rules' `groups` (its SLI recordings, meta
 * recordings and alerts; sloth names each group after the SLO), which read no
 * other SLO's series.
 */
function sloRuleGroups(groups: Json[], slo: string): Json[] {
  return groups.filter((g: Json) => g.name.endsWith(`-crm-${slo}`));
}

/** The alerting rules of alerts.yaml (the causes, the missing data, the Jobs). */
function causeRules(): Json[] {
  return parse(Deno.readTextFileSync(ALERT_RULES)).groups.flatMap((g: Json) => g.rules);
}

/**
 * Each expected alert with the annotations its rule gives it, the label
 * references expanded as Prometheus does (promtool compares them too). Of
 * several rules of one name and severity, the one whose expression holds
 * the expected alert's `from` text (a test's hint, taken out here), or its
 * crm_service matcher.
 */
function withAnnotations(tests: Json[]): Json[] {
  const rules = alertRules();
  for (const test of tests) {
    for (const check of test.alert_rule_test) {
      for (const alert of check.exp_alerts) {
        const service = alert.exp_labels.crm_service;
        const hint = alert.from ?? (service ? `crm_service="${service}"` : "");
        delete alert.from;
        const rule = rules.find((r) =>
          r.alert === check.alertname && r.labels.severity === alert.exp_labels.severity &&
          r.expr.includes(hint)
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
      const write = async (name: string, document: Json) => {
        const file = `${dir}/${name}`;
        await Deno.writeTextFile(file, stringify(document));
        return file;
      };
      const testFile = (name: string, rules: string[], interval: string, cases: Json[]) =>
        write(name, { rule_files: rules, evaluation_interval: interval, tests: cases });
      // Each SLO's cases beside its own rules only: promtool evaluates every rule of a file at
      // every step of every case, and an SLO's rules read no other SLO's series. Together the
      // files hold every group of the SLO rules.
      const sloGroups: Json[] = parse(Deno.readTextFileSync(SLO_RULES)).groups;
      const groups = slos.map((slo) => sloRuleGroups(sloGroups, slo.name));
      for (const [i, slo] of slos.entries()) expect(groups[i], slo.name).toHaveLength(3);
      expect(groups.flat()).toHaveLength(sloGroups.length);
      const perSlo = slos.map((slo) => withAnnotations(sloTests([slo])));
      const causes = withAnnotations(causeTests());
      // The day-long cases (the retention alerts) in a file of their own, evaluated every 10
      // minutes.
      const long = causes.filter((t) => t.interval === LONG_INTERVAL);
      const files = [
        ...await Promise.all(slos.map(async (slo, i) => {
          const rules = await write(`${slo.name}.yaml`, { groups: groups[i] });
          return testFile(`${slo.name}_test.yaml`, [rules], "1m", perSlo[i]);
        })),
        await testFile(
          "causes_test.yaml",
          [ALERT_RULES.pathname],
          "1m",
          causes.filter((t) => !long.includes(t)),
        ),
        await testFile("day_causes_test.yaml", [ALERT_RULES.pathname], LONG_INTERVAL, long),
      ];
      const tests = [...perSlo.flat(), ...causes];
      const tested = await promtool(["test", "rules", ...files]);
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      const alerts = new Set(tests.flatMap((t) => t.alert_rule_test.map((a: Json) => a.alertname)));
      // Every alert of alerts.yaml is tested, firing and quiet.
      const causeAlerts = new Set(causeRules().map((r) => r.alert as string));
      for (const alert of causeAlerts) {
        const cases = tests.filter((t) => t.alert_rule_test[0].alertname === alert);
        expect(cases.some((t) => t.alert_rule_test[0].exp_alerts.length > 0), alert).toBe(true);
        expect(cases.some((t) => t.alert_rule_test[0].exp_alerts.length === 0), alert).toBe(true);
      }
      console.log(
        `[promtool test rules] ${tests.length} cases over ${alerts.size} alerts ` +
          `(${slos.length} SLOs: page and ticket fire, ticket alone, quiet, beside a healthy ` +
          `release; ${causeAlerts.size} cause and missing-data alerts: fire, quiet): ` +
          `${tested.stdout.trim().split("\n").at(-1)}`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }, 300_000);

  it("name a runbook that exists for every alert", () => {
    const alerts = alertRules();
    expect(alerts.length).toBe(slos.length * 2 + causeRules().length);
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
