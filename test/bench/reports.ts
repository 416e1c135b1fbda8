/**
 * `deno task bench reports`: events under reports. The services run as
 * separate processes (`deno task service`, as a cluster runs them) on a fresh
 * Postgres database holding the stats benchmark's generated site
 * (BENCH_REPORTS_PAGE_VIEWS page views over 13 months, 300,000 unless set).
 * The same paced event load (BENCH_REPORTS_EVENT_RATE events a second over
 * BENCH_REPORTS_CONNECTIONS connections for BENCH_REPORTS_SECONDS, after 3 s
 * of it unmeasured) is sent twice: alone, then while BENCH_REPORTS_CONCURRENT (30) clients ask
 * year-long reports back to back, each one that no rollup answers (bots
 * included, so ingest.visits and the rows over twelve months). Each row gives
 * the events' p50 and p99 and their 5xx, and what the reports got. Target:
 * no 5xx, and the p99 under reports at most twice the p99 alone. The
 * services run with their default pools (DATABASE_POOL_SIZE 10,
 * REPORT_POOL_SIZE 4) and REPORT_TIMEOUT_MS.
 */
import type { BenchReport, BenchRow } from "./main.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../../services/ingest/migrations/mod.ts";
import { TRAFFIC_EVENT_TYPES } from "../helpers/generated_traffic.ts";
import { HttpConnection } from "./http_client.ts";
import { percentile } from "./measure.ts";
import { load, SITE, ZONE } from "./stats.ts";
import { startCluster } from "./ingest.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const PAGE_VIEWS = Number(Deno.env.get("BENCH_REPORTS_PAGE_VIEWS") ?? 300_000);
const EVENT_RATE = Number(Deno.env.get("BENCH_REPORTS_EVENT_RATE") ?? 200);
const CONNECTIONS = Number(Deno.env.get("BENCH_REPORTS_CONNECTIONS") ?? 20);
const SECONDS = Number(Deno.env.get("BENCH_REPORTS_SECONDS") ?? 20);
const CONCURRENT = Number(Deno.env.get("BENCH_REPORTS_CONCURRENT") ?? 30);
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const REPORT_KEY = `rk_${"62656e6368".padEnd(48, "0")}`;

/** A year of the site, with bots: no rollup answers it, so it reads the visits and rows. */
const YEAR_REPORT = {
  metrics: ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"],
  dimensions: ["visit:source"],
  date_range: ["2025-11-01", "2026-10-31"],
  include: { bots: true },
  limit: 100,
};

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function manifest(): Promise<string> {
  const example = JSON.parse(
    await Deno.readTextFile(`${ROOT}test/fixtures/contract-example.json`),
  );
  example.site = { ...example.site, id: SITE, timeZone: ZONE, domains: ["bench.example"] };
  example.reportKeys = [REPORT_KEY];
  example.eventTypes = TRAFFIC_EVENT_TYPES.map((type) => ({
    name: type.name,
    title: type.name,
    params: type.params,
    bringsRevenue: type.name === "purchase",
    currency: type.name === "purchase" ? "USD" : null,
  }));
  return JSON.stringify(example);
}

interface EventLoad {
  sent: number;
  p50: number;
  p99: number;
  /** Answers by status, for the 5xx and anything else than 200. */
  statuses: Map<number, number>;
}

/**
 * EVENT_RATE events a second for SECONDS over CONNECTIONS keep-alive
 * connections, each sent at its planned time (or at once when the one before
 * it on its connection was late): the same load whatever the answers take.
 */
async function eventLoad(url: string, run: string, seconds = SECONDS): Promise<EventLoad> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const perConnection = Math.round((EVENT_RATE * seconds) / CONNECTIONS);
  const intervalMs = (1000 * CONNECTIONS) / EVENT_RATE;
  const started = performance.now();
  const headers = { "content-type": "application/json", "x-event-key": SECRET_KEY };
  const worker = async (c: number) => {
    const connection = await HttpConnection.open(url);
    try {
      for (let i = 0; i < perConnection; i++) {
        const due = started + (c / CONNECTIONS + i) * intervalMs;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const body = JSON.stringify({
          name: "signup",
          event_id: `${run}-${c}-${i}`,
          visitor_id: `v-${c}-${i % 50}`,
          params: { plan: "pro", seats: 1 },
        });
        const t0 = performance.now();
        let status = 0;
        try {
          status = (await connection.post("/marketing/event", headers, body)).status;
        } catch {
          status = 599; // the connection failed: counted with the 5xx
        }
        latencies.push(performance.now() - t0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => worker(c)));
  latencies.sort((a, b) => a - b);
  return {
    sent: latencies.length,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    statuses,
  };
}

interface ReportLoad {
  answered: Map<string, number>;
  p50: number;
}

/** CONCURRENT clients asking YEAR_REPORT back to back until stopped. */
function reportLoad(url: string): { done: Promise<ReportLoad>; stop: () => void } {
  let stopped = false;
  const answered = new Map<string, number>();
  const latencies: number[] = [];
  const headers = { "content-type": "application/json", "x-report-key": REPORT_KEY };
  const client = async () => {
    const connection = await HttpConnection.open(url);
    try {
      while (!stopped) {
        const t0 = performance.now();
        const answer = await connection.post(
          "/stats/v1/query",
          headers,
          JSON.stringify(YEAR_REPORT),
        );
        latencies.push(performance.now() - t0);
        const key = answer.status === 200
          ? "200"
          : `${answer.status} ${JSON.parse(answer.body || "{}").message ?? ""}`;
        answered.set(key, (answered.get(key) ?? 0) + 1);
      }
    } finally {
      connection.close();
    }
  };
  const done = Promise.all(Array.from({ length: CONCURRENT }, client)).then(() => {
    latencies.sort((a, b) => a - b);
    return { answered, p50: percentile(latencies, 0.5) };
  });
  return { done, stop: () => (stopped = true) };
}

function eventRow(name: string, events: EventLoad, reports?: ReportLoad): BenchRow {
  const fivexx = [...events.statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  const other = [...events.statuses].filter(([s]) => s !== 200 && s < 500);
  return {
    row: name,
    events: events.sent,
    "event p50 ms": round(events.p50),
    "event p99 ms": round(events.p99),
    "event 5xx": fivexx,
    "other answers": other.length ? other.map(([s, c]) => `${s}: ${c}`).join(", ") : "",
    reports: reports
      ? [...reports.answered].map(([k, c]) => `${k}: ${c}`).join(", ")
      : "none running",
    "report p50 ms": reports ? round(reports.p50) : null,
  };
}

export async function run(): Promise<BenchReport> {
  const report: BenchReport = {
    name: "reports",
    description:
      `Events under reports: ${EVENT_RATE} events/s over ${CONNECTIONS} connections for ${SECONDS} s, alone and while ${CONCURRENT} clients ask year-long reports back to back (no rollup answers them) on a site of ${PAGE_VIEWS} page views; one process per service, Postgres.`,
    rows: [],
    notes: [],
  };
  if (!DATABASE_URL || !REDIS_URL) {
    report.notes!.push("needs DATABASE_URL and REDIS_URL; nothing measured");
    return report;
  }
  const fresh = await freshPostgresUrl();
  const db = await openPostgres(fresh.url, { poolSize: 4 });
  try {
    await migrate(db, INGEST_SCHEMA, ingestMigrations);
    const loaded = await load(db, PAGE_VIEWS);
    await db.exec("analyze");
    report.notes!.push(`load: ${loaded.items} items in ${round(loaded.seconds)} s`);
    const cluster = await startCluster(fresh.url, REDIS_URL, await manifest(), {
      RATE_LIMIT_STATS_PER_KEY: "1000000000",
    });
    try {
      // Connections, caches and compiled code warmed up first, unmeasured.
      await eventLoad(cluster.url, "warm", 3);
      const alone = await eventLoad(cluster.url, "alone");
      report.rows.push(eventRow("events alone", alone));
      const reports = reportLoad(cluster.url);
      // The reports fill their pool before the events start.
      await new Promise((r) => setTimeout(r, 2000));
      const under = await eventLoad(cluster.url, "under");
      reports.stop();
      const reportsDone = await reports.done;
      report.rows.push(eventRow("events under reports", under, reportsDone));
      report.notes!.push(
        `event p99 under reports / alone: ${round(under.p99 / alone.p99, 2)} (target: at most 2)`,
      );
    } finally {
      await cluster.stop();
    }
    report.notes!.push(
      `machine: ${navigator.hardwareConcurrency} cores, shared with other work; figures are noisy`,
      "the load generator, the services and Postgres share those cores",
    );
  } finally {
    await db.close();
    await fresh.drop();
  }
  return report;
}
