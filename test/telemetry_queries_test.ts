/**
 * What the docs, the alerts and the dashboards say about the metrics, held
 * against what a real run exports (test/helpers/telemetry_run.ts: `deno task
 * start` exporting OTLP/JSON to a stand-in collector, driven through every
 * kind of request and a Redis outage). The exports are turned into the
 * series Prometheus would store (the OpenTelemetry-to-Prometheus naming
 * rules, test/helpers/otlp_prometheus.ts) and fed to promtool:
 *
 * - every PromQL query of docs/observability.md and docs/runbooks/ (the
 *   ```promql blocks) returns data at some point of the run;
 * - every metric the alert rules and the dashboards' queries read is one the
 *   run exported, and every dashboard query parses;
 * - the log records went out over OTLP with the trace id, span id and
 *   sampled flag of the request they were written for, the same line as on
 *   stderr.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { haveTools, tool } from "./helpers/tools.ts";
import { runCommand } from "./helpers/process.ts";
import { redisServerInstalled } from "./helpers/redis_server.ts";
import { type CapturedRun, captureRealRun } from "./helpers/telemetry_run.ts";
import {
  metricNames,
  prometheusSeries,
  promtoolValues,
  type Series,
  seriesSelector,
} from "./helpers/otlp_prometheus.ts";
import { dashboards, panelQueries } from "../helm/dashboards.ts";
import { ALERT_RULES, SLO_RULES } from "../helm/monitoring.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The ```promql blocks of the SRE docs, with the file each is in. */
function docQueries(): { file: string; expr: string }[] {
  const files = [
    "docs/observability.md",
    ...[...Deno.readDirSync(`${ROOT}docs/runbooks`)].map((e) => `docs/runbooks/${e.name}`),
  ];
  return files.flatMap((file) =>
    [...Deno.readTextFileSync(`${ROOT}${file}`).matchAll(/```promql\n([\s\S]*?)```/g)]
      .map((m) => ({ file, expr: m[1].trim() }))
  );
}

/** The expressions of every rule of the chart. */
function ruleExpressions(): string[] {
  return [SLO_RULES, ALERT_RULES].flatMap((file) =>
    parse(Deno.readTextFileSync(file)).groups.flatMap((g: { rules: { expr: string }[] }) =>
      g.rules.map((r) => r.expr)
    )
  );
}

const withRange = (expr: string) => expr.replaceAll("$__rate_interval", "5m");

describe.runIf(haveTools("promtool") && (await redisServerInstalled()))(
  "the metrics a real run exports",
  () => {
    let run: CapturedRun;
    let series: Series[];
    let names: Set<string>;
    const promtool = (args: string[]) => runCommand(tool("promtool")!, args);

    beforeAll(async () => {
      run = await captureRealRun();
      series = prometheusSeries(run.metrics);
      names = new Set(series.map((s) => s.name));
      console.log(
        `[telemetry run] ${run.metrics.length} metric exports, ${series.length} series of ` +
          `${names.size} names; ${run.logs.length} log records`,
      );
    }, 180_000);

    it("answer every PromQL query of the docs with data", async () => {
      const queries = docQueries();
      expect(queries.length).toBeGreaterThanOrEqual(10);
      for (const { file, expr } of queries) {
        for (const name of metricNames(expr)) {
          expect(names, `${file}: ${name} in ${expr}`).toContain(name);
        }
      }
      const steps = run.metrics.length;
      const dir = await Deno.makeTempDir({ prefix: "crm-docs-promql-" });
      try {
        // Each query as an alert that fires when the query returned data at
        // any step of the run (a subquery over the whole run), checked at its end.
        const rules = {
          groups: [{
            name: "docs",
            rules: queries.map(({ expr }, i) => ({
              alert: `DocsQuery${i}`,
              expr: `count_over_time((count(${expr}))[${steps}m:1m]) > 0`,
            })),
          }],
        };
        const test = {
          rule_files: [`${dir}/rules.yaml`],
          evaluation_interval: "1m",
          tests: [{
            interval: "1m",
            input_series: series.map((s) => ({
              series: seriesSelector(s),
              values: promtoolValues(s.values, steps),
            })),
            alert_rule_test: queries.map((_, i) => ({
              eval_time: `${steps - 1}m`,
              alertname: `DocsQuery${i}`,
              exp_alerts: [{ exp_labels: {} }],
            })),
          }],
        };
        await Deno.writeTextFile(`${dir}/rules.yaml`, stringify(rules));
        await Deno.writeTextFile(`${dir}/test.yaml`, stringify(test));
        const tested = await promtool(["test", "rules", `${dir}/test.yaml`]);
        const failed = [...tested.stdout.matchAll(/alertname: DocsQuery(\d+)/g)]
          .map((m) => queries[Number(m[1])]);
        expect(failed, tested.stdout + tested.stderr).toEqual([]);
        expect(tested.code, tested.stdout + tested.stderr).toBe(0);
        console.log(
          `[docs PromQL] ${queries.length} queries of ${
            new Set(queries.map((q) => q.file)).size
          } files each returned data on the run's ${steps} exports`,
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }, 120_000);

    it("hold every metric the alert rules read", () => {
      // The Job alerts read kube-state-metrics' series (kube_*), which no run of ours exports.
      const read = new Set(
        ruleExpressions().flatMap(metricNames).filter((name) =>
          !name.startsWith("slo:") && !name.startsWith("kube_")
        ),
      );
      expect(read.size).toBeGreaterThanOrEqual(5);
      for (const name of read) expect(names, name).toContain(name);
    });

    it("hold every metric the dashboards' panels read, in queries that parse", async () => {
      const queries = Object.entries(dashboards()).flatMap(([file, json]) =>
        panelQueries(json).map((q) => ({ file, ...q }))
      );
      for (const { file, panel, expr } of queries) {
        const read = metricNames(withRange(expr));
        expect(read.length, `${file} "${panel}"`).toBeGreaterThan(0);
        for (const name of read) expect(names, `${file} "${panel}": ${name}`).toContain(name);
      }
      const dir = await Deno.makeTempDir({ prefix: "crm-dashboards-" });
      try {
        const file = `${dir}/rules.yaml`;
        await Deno.writeTextFile(
          file,
          stringify({
            groups: [{
              name: "panels",
              rules: queries.map((q, i) => ({
                record: `panel:query${i}`,
                expr: withRange(q.expr),
              })),
            }],
          }),
        );
        const checked = await promtool(["check", "rules", file]);
        expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
      console.log(
        `[dashboards] ${queries.length} panel queries over ${
          Object.keys(dashboards()).length
        } dashboards name only exported metrics and parse`,
      );
    });

    it("send the log lines over OTLP with their request's trace id, span id and sampled flag", () => {
      const lines = run.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) =>
        JSON.parse(l)
      );
      const requests = lines.filter((l) => l.msg === "request" && l.traceId);
      const sampled = requests.filter((l) => l.sampled === true).length;
      const unsampled = requests.filter((l) => l.sampled === false).length;
      // At a ratio of 0.5 both kinds are there (the chance of either being absent is 2^-100 or less).
      expect(sampled).toBeGreaterThan(0);
      expect(unsampled).toBeGreaterThan(0);
      const byBody = new Map(run.logs.map((r) => [r.body.trim(), r]));
      let matched = 0;
      for (const line of requests) {
        const record = byBody.get(JSON.stringify(line));
        expect(record, `no OTLP record for ${JSON.stringify(line)}`).toBeDefined();
        // debug, or warn for a request slower than 1 s (a busy machine has some).
        expect(record!.severityText).toBe(line.level.toUpperCase());
        expect(record!.traceId).toBe(line.traceId);
        expect(record!.spanId).toBe(line.spanId);
        expect((record!.flags & 1) === 1).toBe(line.sampled);
        matched++;
      }
      // Lines were not also printed to stdout by the console capture.
      expect(run.stdout).not.toContain('"msg":"request"');
      console.log(
        `[logs over OTLP] ${matched} access log lines (${sampled} of sampled traces, ` +
          `${unsampled} of unsampled) each exported with its trace id, span id and flags`,
      );
    });
  },
);
