/**
 * deploy/otel-collector.yaml, the collector docs/observability.md ("A
 * collector") gives, run as it is by a real OpenTelemetry Collector built
 * with those components (`.ci/tools.sh collector`), between `deno task
 * start` and a real Jaeger. The system exports as the chart configures it
 * (OTLP/HTTP, the release and the namespace as resource attributes); the
 * test reads what Prometheus would scrape from the collector and what
 * Jaeger stored:
 *
 * - every metric the alert rules and the SLO rules read is there, each
 *   rule's selector (narrowed to the release as the chart narrows it)
 *   matching a series, so the names and labels the rules expect are the
 *   ones a collector makes;
 * - each metric of the docs' table that the run exports has the Prometheus
 *   name the table gives ("Prometheus names"), and carries the resource
 *   attributes as labels (service_namespace, k8s_namespace_name,
 *   service_name), `job` and `instance`;
 * - a request's trace reaches Jaeger through the collector, the log records
 *   reach the debug exporter, and the collector stops cleanly on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { haveTools, tool } from "../helpers/tools.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { freePort } from "../helpers/ports.ts";
import { type Jaeger, newTraceparent, startJaeger } from "../helpers/jaeger.ts";
import { keepTail, runTask, type StartedProcess, startTask } from "../helpers/process.ts";
import { ALERT_RULES, SLO_RULES } from "../../helm/monitoring.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CONFIG = `${ROOT}deploy/otel-collector.yaml`;

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
/** A report key the run adds to the seed, so the reports routes have series too. */
const REPORT_KEY = "rk_" + "5e".repeat(24);
const SEED = "test/fixtures/contract-example.json";

/** The release and namespace, as the chart sets them on every pod. */
const RELEASE = "crm-collector";
const NAMESPACE = "tenant-a";
const INSTANCE = crypto.randomUUID();
const SERVICE = "crm";

/**
 * Metrics of the docs' table the run need not export: a backfill's progress
 * exists only once the process has seen a background backfill, and the rate
 * limit's refusals only after one. Each is still checked by name when it is
 * there.
 */
const NOT_IN_THIS_RUN = new Set(["crm.backfill.progress", "crm.gateway.rate_limited"]);

interface Series {
  name: string;
  labels: Record<string, string>;
}

/** Prometheus' text format, as the collector's Prometheus exporter serves it. */
function parseExposition(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (
      const label of (match[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)
    ) {
      labels[label[1]] = JSON.parse(`"${label[2]}"`);
    }
    series.push({ name: match[1], labels });
  }
  return series;
}

interface Selector {
  text: string;
  name: string;
  matchers: { label: string; op: string; value: string }[];
}

/**
 * The selectors of every rule of the chart, narrowed to one release as the
 * chart's PrometheusRule narrows them (helm/crm/templates/monitoring.yaml).
 * Left out: kube-state-metrics' series and the rules' own recorded series,
 * which no collector of ours makes; and the matchers that select failures (a
 * 5xx, a failed commit), which a healthy run has none of.
 */
function ruleSelectors(): { file: string; selector: Selector }[] {
  const out: { file: string; selector: Selector }[] = [];
  for (const file of [ALERT_RULES, SLO_RULES]) {
    const rules = parse(Deno.readTextFileSync(file)).groups
      .flatMap((g: { rules: { expr: string }[] }) => g.rules);
    for (const { expr } of rules) {
      const narrowed = expr
        .replaceAll(`k8s_namespace_name=~".*"`, `k8s_namespace_name="${NAMESPACE}"`)
        .replaceAll(`service_namespace=~".*"`, `service_namespace="${RELEASE}"`);
      for (const m of narrowed.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)) {
        const name = m[1];
        if (name.startsWith("kube_") || name.startsWith("slo:")) continue;
        const matchers = [...m[2].matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)]
          .map(([, label, op, value]) => ({ label, op, value }))
          .filter(({ label, op, value }) =>
            !(label === "http_response_status_code" && value === "5..") &&
            !(label === "error_type" && op === "!=" && value === "")
          );
        out.push({
          file: file.pathname.replace(ROOT, ""),
          selector: { text: m[0], name, matchers },
        });
      }
    }
  }
  return out;
}

function matches(selector: Selector, series: Series): boolean {
  if (series.name !== selector.name) return false;
  return selector.matchers.every(({ label, op, value }) => {
    const actual = series.labels[label] ?? "";
    const re = () => new RegExp(`^(?:${value})$`).test(actual);
    return op === "="
      ? actual === value
      : op === "!="
      ? actual !== value
      : op === "=~"
      ? re()
      : !re();
  });
}

/** The docs' metric table: each OpenTelemetry name with the Prometheus name promised for it. */
function documentedNames(): { otel: string; prometheus: string; kind: string }[] {
  const doc = Deno.readTextFileSync(`${ROOT}docs/observability.md`);
  return [...doc.matchAll(/^\| `([a-z0-9_.]+)` \(`([a-z0-9_]+)`\)\s*\| (\w+)/gm)]
    .map(([, otel, prometheus, kind]) => ({ otel, prometheus, kind }));
}

/** What is wrong with the collector's endpoint (empty once it holds what the docs and rules say). */
function problems(series: Series[]): string[] {
  const found: string[] = [];
  const ours = series.filter((s) => s.labels.service_namespace === RELEASE);
  for (const { file, selector } of ruleSelectors()) {
    if (!ours.some((s) => matches(selector, s))) {
      found.push(`${file}: no series for ${selector.text}`);
    }
  }
  const documented = documentedNames();
  const names = new Set(ours.map((s) => s.name));
  // Each exported name belongs to the documented metric whose name is its longest prefix.
  for (const name of names) {
    const owner = documented
      .filter(({ otel }) => name.startsWith(otel.replaceAll(".", "_")))
      .sort((a, b) => b.otel.length - a.otel.length)[0];
    if (!owner) continue;
    const promised = owner.kind === "histogram"
      ? ["_bucket", "_sum", "_count"].map((suffix) => owner.prometheus + suffix)
      : [owner.prometheus];
    if (!promised.includes(name)) {
      found.push(`${owner.otel}: exported as ${name}, documented as ${owner.prometheus}`);
    }
  }
  for (const { otel, prometheus, kind } of documented) {
    if (NOT_IN_THIS_RUN.has(otel)) continue;
    const name = kind === "histogram" ? `${prometheus}_count` : prometheus;
    if (!names.has(name)) found.push(`${otel}: no ${name}`);
  }
  const expected: Record<string, string> = {
    service_namespace: RELEASE,
    k8s_namespace_name: NAMESPACE,
    service_name: SERVICE,
    job: `${RELEASE}/${SERVICE}`,
    instance: INSTANCE,
  };
  const wrongLabels = new Set<string>();
  for (const s of ours) {
    if (!documented.some(({ prometheus }) => s.name.startsWith(prometheus))) continue;
    for (const [label, value] of Object.entries(expected)) {
      if (s.labels[label] !== value) {
        wrongLabels.add(`${s.name}: ${label}=${JSON.stringify(s.labels[label])}, not ${value}`);
      }
    }
  }
  return [...found, ...wrongLabels];
}

interface Collector {
  prometheusUrl: string;
  otlpUrl: string;
  stderr(): string;
  stop(): Promise<number>;
}

async function startCollector(jaeger: Jaeger): Promise<Collector> {
  const otlpPort = freePort();
  const prometheusPort = freePort();
  const child = new Deno.Command(tool("otelcol-crm")!, {
    args: [
      "--config",
      CONFIG,
      // The collector's own metrics would listen on port 8888 by default,
      // which parallel runs would share; they are not what is tested.
      "--set=service.telemetry.metrics.level=none",
    ],
    env: {
      OTLP_HTTP_ENDPOINT: `127.0.0.1:${otlpPort}`,
      PROMETHEUS_ENDPOINT: `127.0.0.1:${prometheusPort}`,
      TRACES_ENDPOINT: jaeger.otlpEndpoint,
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = keepTail(child.stderr, 200_000);
  const collector: Collector = {
    prometheusUrl: `http://127.0.0.1:${prometheusPort}/metrics`,
    otlpUrl: `http://127.0.0.1:${otlpPort}`,
    stderr,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      return (await child.status).code;
    },
  };
  const deadline = Date.now() + 20_000;
  while (!stderr().includes("Everything is ready")) {
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the collector did not start:\n${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return collector;
}

async function scrape(url: string): Promise<Series[]> {
  const answer = await fetch(url);
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${url}: ${answer.status} ${text}`);
  return parseExposition(text);
}

describe.runIf(REDIS_URL && haveTools("otelcol-crm", "jaeger"))("the example collector", () => {
  let jaeger: Jaeger;
  let collector: Collector | undefined;
  let system: StartedProcess | undefined;
  let dataDir: string;

  beforeAll(async () => {
    jaeger = await startJaeger({
      otlpHttp: freePort(),
      otlpGrpc: freePort(),
      query: freePort(),
      queryGrpc: freePort(),
      health: freePort(),
    });
    dataDir = await Deno.makeTempDir({ prefix: "crm-collector-" });
  }, 60_000);

  afterAll(async () => {
    try {
      system?.process.kill("SIGKILL");
    } catch { /* stopped */ }
    await collector?.stop();
    await jaeger?.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });

  it(
    "turns the system's telemetry into the series the rules read and the traces Jaeger shows",
    async () => {
      collector = await startCollector(jaeger);
      const seed = `${dataDir}/seed.json`;
      const manifest = JSON.parse(await Deno.readTextFile(`${ROOT}${SEED}`));
      await Deno.writeTextFile(seed, JSON.stringify({ ...manifest, reportKeys: [REPORT_KEY] }));
      // Ports chosen here, so `deno task admin` can reach ingest-service.
      const services = {
        AUTH_URL: `http://127.0.0.1:${freePort()}`,
        CONTENT_URL: `http://127.0.0.1:${freePort()}`,
        INGEST_URL: `http://127.0.0.1:${freePort()}`,
      };
      system = await startTask(["--seed", seed], {
        ...services,
        CRM_DATA_DIR: dataDir,
        DATABASE_URL: "",
        REDIS_URL: REDIS_URL!,
        REDIS_KEY_PREFIX: `crmcollector${Date.now().toString(36)}:`,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl,
        OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${INSTANCE},service.namespace=${RELEASE},` +
          `k8s.namespace.name=${NAMESPACE},k8s.pod.name=crm-0`,
        OTEL_BSP_SCHEDULE_DELAY: "200",
        OTEL_BLRP_SCHEDULE_DELAY: "200",
        OTEL_METRIC_EXPORT_INTERVAL: "1000",
        // Every request's access line is a log record at debug.
        LOG_LEVEL: "debug",
      }, { direct: true });
      const url = system.url;
      const send = async (path: string, init: RequestInit = {}) => {
        const answer = await fetch(`${url}${path}`, init);
        await answer.body?.cancel();
        return answer.status;
      };
      const post = (path: string, body: unknown, headers: Record<string, string>) =>
        send(path, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });

      const read = newTraceparent();
      expect(
        await send("/content/v1/pages/home?lang=en", {
          headers: { "x-crm-key": SITE_KEY, traceparent: read.header },
        }),
      ).toBe(200);
      for (let i = 0; i < 3; i++) {
        expect(await send("/content/v1/pages/home?lang=en", { headers: { "x-crm-key": SITE_KEY } }))
          .toBe(200);
        expect(
          await post("/marketing/event", { name: "signup", event_id: `e-${i}` }, {
            "x-event-key": SECRET_KEY,
          }),
        ).toBe(200);
      }
      expect(
        await post("/marketing/view", { u: "https://demo.example/", v: "v-1" }, {
          origin: "https://demo.example",
        }),
      ).toBeLessThan(300);
      expect(
        await post("/stats/v1/query", { metrics: ["pageviews"], date_range: "7d" }, {
          "x-report-key": REPORT_KEY,
        }),
      ).toBe(200);
      // Over the gateway's URL limit: refused at once, which crm.gateway.refused counts.
      expect(await send(`/content/v1/pages/home?pad=${"x".repeat(9000)}`)).toBe(414);
      // The retention job, as its CronJob runs it: its last success becomes a gauge.
      const retention = await runTask(["admin", "retention", "run"], services);
      expect(retention.code, retention.stderr).toBe(0);

      await expect.poll(async () => problems(await scrape(collector!.prometheusUrl)), {
        timeout: 20_000,
        interval: 500,
      }).toEqual([]);
      const documented = documentedNames();
      const exported = new Set((await scrape(collector.prometheusUrl)).map((s) => s.name));
      const present = documented.filter(({ prometheus, kind }) =>
        exported.has(kind === "histogram" ? `${prometheus}_count` : prometheus)
      );
      console.log(
        `[collector] ${ruleSelectors().length} selectors of the rules each matched a series; ` +
          `${present.length} of the ${documented.length} metrics of the docs' table exported ` +
          `under their documented names with the release's labels`,
      );

      const trace = await jaeger.trace(
        read.traceId,
        (t) => t.spans.some((s) => s.operationName === "GET /content/v1/pages/:marker"),
      );
      expect(Object.values(trace.processes).map((p) => p.serviceName)).toContain(SERVICE);

      expect(await system.stop()).toBe(0);
      system = undefined;
      // The debug exporter counts the log records it was handed.
      expect(collector.stderr()).toMatch(/"log records": [1-9]/);
      expect(await collector.stop(), collector.stderr()).toBe(0);
      expect(collector.stderr()).toContain("Shutdown complete");
      collector = undefined;
    },
    90_000,
  );
});
