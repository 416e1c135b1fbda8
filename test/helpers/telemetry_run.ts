/**
 * A real run's telemetry: `deno task start` on the contract example site,
 * exporting over OTLP/JSON to a stand-in collector every second, driven
 * through every kind of request the dashboards, alerts and docs speak of
 * (hot and cold content reads, unknown pages, stored and refused events,
 * page views, reports queries, a retention run) and through a Redis outage, then stopped
 * with SIGTERM so the last export is flushed. What it exported is what the
 * PromQL of the docs, the alert rules and the dashboards are checked against.
 */
import { startOtlpReceiver } from "./otlp_receiver.ts";
import type { LogRecord, OtlpJson } from "./otlp_receiver.ts";
import { logRecords } from "./otlp_receiver.ts";
import { runTask, startTask } from "./process.ts";
import { freePort } from "./ports.ts";
import { startOwnRedis } from "./redis_server.ts";

export const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const SEED = "test/fixtures/contract-example.json";
/** A report key the run adds to the seed, so reports queries reach ingest-service. */
const REPORT_KEY = "rk_" + "5e".repeat(24);
const EXPORT_MS = 1000;

export interface CapturedRun {
  /** The bodies of every /v1/metrics export, in order. */
  metrics: OtlpJson[];
  traces: OtlpJson[];
  logs: LogRecord[];
  /** What the process wrote on stderr (its JSON log lines, every request's at debug). */
  stderr: string;
  stdout: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function captureRealRun(): Promise<CapturedRun> {
  const receiver = startOtlpReceiver();
  const redis = await startOwnRedis();
  const dataDir = await Deno.makeTempDir({ prefix: "crm-telemetry-" });
  const seed = `${dataDir}/seed.json`;
  const manifest = JSON.parse(await Deno.readTextFile(SEED));
  await Deno.writeTextFile(seed, JSON.stringify({ ...manifest, reportKeys: [REPORT_KEY] }));
  // Ports chosen here, so `deno task admin` can reach the services.
  const services = {
    AUTH_URL: `http://127.0.0.1:${freePort()}`,
    CONTENT_URL: `http://127.0.0.1:${freePort()}`,
    INGEST_URL: `http://127.0.0.1:${freePort()}`,
  };
  try {
    const running = await startTask(["--seed", seed], {
      ...services,
      CRM_DATA_DIR: dataDir,
      DATABASE_URL: "",
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `crmtelemetry${Date.now().toString(36)}:`,
      LOG_LEVEL: "debug",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      // Half the traces: log records of sampled and of unsampled requests.
      OTEL_TRACES_SAMPLER_ARG: "0.5",
      // Low enough for the run to meet 429s, which crm.gateway.rate_limited counts.
      RATE_LIMIT_INVALID_KEY_PER_IP: "5",
      // Low enough for a burst to meet 503 overloaded, the one 5xx a healthy system gives.
      HTTP_MAX_IN_FLIGHT: "4",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_BLRP_SCHEDULE_DELAY: "200",
      OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_MS),
    }, { direct: true });
    const url = running.url;
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${url}${path}`, {
        headers: { "x-crm-key": SITE_KEY, ...headers },
      });
      await answer.body?.cancel();
      return answer;
    };
    const post = async (path: string, body: unknown, headers: Record<string, string>) => {
      const answer = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
      await answer.body?.cancel();
      return answer;
    };
    const round = async (n: number) => {
      for (let i = 0; i < 10; i++) await get("/content/v1/pages/home?lang=en");
      await get(`/content/v1/pages/home?lang=en&cold=${n}`);
      await get("/content/v1/pages/nowhere?lang=en");
      await get("/content/v1/blog?lang=en");
      for (let i = 0; i < 5; i++) {
        await post("/marketing/event", { name: "signup", event_id: `e-${n}-${i}` }, {
          "x-event-key": SECRET_KEY,
        });
      }
      await post("/marketing/event", { name: "undeclared", event_id: `u-${n}` }, {
        "x-event-key": SECRET_KEY,
      });
      await post("/marketing/view", { u: "https://demo.example/", v: `v-${n}` }, {
        origin: "https://demo.example",
      });
      await post("/stats/v1/query", { metrics: ["pageviews"], date_range: "7d" }, {
        "x-report-key": REPORT_KEY,
      });
      // A key nobody has: 401, then 429 once over RATE_LIMIT_INVALID_KEY_PER_IP.
      for (let i = 0; i < 4; i++) {
        await get("/content/v1/langs", { "x-crm-key": "pk_" + "0".repeat(32) });
      }
      // Over HTTP_MAX_URL_BYTES: refused at once, counted by crm.gateway.refused.
      await get(`/content/v1/pages/home?pad=${"x".repeat(9000)}`);
    };
    for (let n = 0; n < 4; n++) {
      await round(n);
      // A burst past HTTP_MAX_IN_FLIGHT: some answers are 503 overloaded.
      await Promise.all(Array.from({ length: 24 }, () => get("/content/v1/pages/home?lang=en")));
      await pause(EXPORT_MS);
    }
    // The daily retention job, as its CronJob runs it: its last success becomes a gauge.
    const retention = await runTask(["admin", "retention", "run"], services);
    if (retention.code !== 0) throw new Error(`retention run failed: ${retention.stderr}`);
    // Redis away: the rate limits fall back to in-process windows.
    await redis.kill();
    for (let n = 4; n < 7; n++) {
      await round(n);
      await pause(EXPORT_MS);
    }
    await redis.restart();
    for (let n = 7; n < 10; n++) {
      await round(n);
      await pause(EXPORT_MS);
    }
    const { stderr } = running.output();
    const code = await running.stop();
    if (code !== 0) throw new Error(`start stopped with ${code}:\n${stderr}`);
    return {
      metrics: receiver.received("/v1/metrics"),
      traces: receiver.received("/v1/traces"),
      logs: logRecords(receiver),
      stderr: running.output().stderr,
      stdout: running.output().stdout,
    };
  } finally {
    await redis.close();
    await receiver.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}
