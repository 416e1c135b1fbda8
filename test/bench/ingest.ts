/**
 * `deno task bench ingest`: end-to-end durable ingest throughput. The whole
 * system runs as its own process (`deno task start` on a fresh Postgres
 * database, marketing limits raised); this process drives POST
 * /marketing/event through wrk (or its own JavaScript client,
 * BENCH_INGEST_CLIENT=deno) over many concurrent keep-alive connections,
 * every event with its own id, and counts only 200 answers (each sent after
 * its commit).
 * In the same run the same rows are bulk-inserted straight into the same
 * Postgres (multi-row INSERT ... SELECT FROM json_to_recordset, 1000 rows a
 * statement, ids into ingest.event_ids as the service does), for comparison.
 * The end-to-end run is made twice, the second time with the reports'
 * derived tables not kept (ingest-service told so in-process by
 * start_without_upkeep.ts), to show what their upkeep costs.
 */
import type { BenchReport } from "./main.ts";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { serviceArgs, type StartedProcess, startTask } from "../helpers/process.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import { HttpConnection } from "./http_client.ts";
import { cpuMicros, percentile, threadShares, threadTicks } from "./measure.ts";
import { ensureWrk, wrk } from "./wrk.ts";
import { loadConfig } from "../../services/lib/config.ts";
import { adminClients, SITE_SERVICES } from "../../services/cli/admin_clients.ts";
import { importManifest } from "../../services/cli/site_manifest.ts";
import { freePort } from "../helpers/ports.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const EVENTS = Number(Deno.env.get("BENCH_INGEST_EVENTS") ?? 60_000);
const CONCURRENCY = Number(Deno.env.get("BENCH_INGEST_CONCURRENCY") ?? 256);
const WARMUP = 3_000;
/**
 * The load generator: "wrk" (default; a C process, with a Lua script that
 * gives every request its own event) or "deno" (this process, a JavaScript
 * HTTP/1.1 client, about three times wrk's CPU per event).
 */
const CLIENT = Deno.env.get("BENCH_INGEST_CLIENT") ?? "wrk";
if (CLIENT !== "wrk" && CLIENT !== "deno") {
  throw new Error(`BENCH_INGEST_CLIENT must be wrk or deno, not ${CLIENT}`);
}
/** How long wrk drives each row (its warm-up is 3 s more). */
const SECONDS = Number(Deno.env.get("BENCH_INGEST_SECONDS") ?? 15);
/** Which rows to measure (all by default): durable, upkeep-off, bulk, cluster. */
const ROWS = new Set(
  (Deno.env.get("BENCH_INGEST_ROWS") ?? "durable,upkeep-off,bulk,cluster").split(","),
);
/** Flags for the system process's `deno run`, e.g. `--v8-flags=--perf-basic-prof` to profile it. */
const DENO_FLAGS = (Deno.env.get("BENCH_INGEST_DENO_FLAGS") ?? "").split(" ").filter(Boolean);
/** CPUs the system process (every thread) is pinned to, as taskset takes them ("0", "0,1"). */
const CPUS = Deno.env.get("BENCH_INGEST_CPUS");

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

const RAISED_LIMITS = {
  RATE_LIMIT_MARKETING_PER_IP: "1000000000",
  RATE_LIMIT_MARKETING_PER_SITE: "1000000000",
};

async function waitForLine(child: Deno.ChildProcess, pattern: RegExp): Promise<string> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!pattern.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process exited: ${out}`);
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return out;
}

/**
 * The services as separate processes, as a cluster runs them (`deno task
 * service NAME` for auth, content, ingest and the gateway), so the gateway
 * and ingest-service each get a core of their own.
 */
export async function startCluster(
  databaseUrl: string,
  redisUrl: string,
  seed: string,
  settings: Record<string, string> = {},
) {
  const ports = { auth: freePort(), content: freePort(), ingest: freePort(), gateway: freePort() };
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `${uniqueId("bench")}:`,
    HOST: "127.0.0.1",
    AUTH_URL: `http://127.0.0.1:${ports.auth}`,
    CONTENT_URL: `http://127.0.0.1:${ports.content}`,
    INGEST_URL: `http://127.0.0.1:${ports.ingest}`,
    LOG_LEVEL: "error",
    ...RAISED_LIMITS,
    ...settings,
  };
  const children: Deno.ChildProcess[] = [];
  const url = `http://127.0.0.1:${ports.gateway}`;
  try {
    for (const name of ["auth", "content", "ingest", "gateway"] as const) {
      const child = new Deno.Command("deno", {
        args: serviceArgs(name),
        cwd: ROOT,
        env: { ...env, GRPC_PORT: String(ports[name]), PORT: String(ports.gateway) },
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      children.push(child);
      await waitForLine(child, /listening on/);
    }
    const clients = adminClients(loadConfig(env, "admin"));
    for (const name of SITE_SERVICES) await clients[name].migrate({});
    await importManifest(clients, seed);
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`${url}/healthz`).then((r) => r.status).catch(() => 0)) === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    // Never leave services behind when the cluster could not start.
    for (const child of children) {
      child.kill("SIGKILL");
      await child.status;
    }
    throw error;
  }
  return {
    url,
    children,
    /** Stops the services, the gateway first. */
    async stop() {
      for (const child of [...children].reverse()) {
        child.kill("SIGTERM");
        await child.status;
      }
    },
  };
}

function eventBody(run: string, i: number) {
  return {
    name: "purchase",
    event_id: `${run}-${i}`,
    visitor_id: `v-${i % 5000}`,
    params: { product: "beans", quantity: (i % 7) + 1 },
    value: 1299,
    url: "https://demo.example/checkout/thanks",
  };
}

/**
 * eventBody in wrk's Lua: every request its own event id (`RUN-N`), the same
 * fields and values. wrk runs one thread here, so one counter numbers them.
 */
const EVENT_SCRIPT = `
local run, n = "", 0
function init(args) run = args[1] end
function request()
  n = n + 1
  local body = string.format(
    '{"name":"purchase","event_id":"%s-%d","visitor_id":"v-%d",' ..
    '"params":{"product":"beans","quantity":%d},"value":1299,' ..
    '"url":"https://demo.example/checkout/thanks"}',
    run, n, n % 5000, (n % 7) + 1)
  return wrk.format("POST", "/marketing/event", nil, body)
end
`;

interface LoadResult {
  ok: number;
  failed: number;
  /** Each failure's status (0: no answer) and the first answer's body, to say what failed. */
  failures: Map<string, number>;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** The load generator's own CPU time, in µs. */
  cpuMicros: number;
}

/** Drives `url` with `count` events (the deno client) or for SECONDS (wrk). */
function load(url: string, run: string, count: number, seconds: number): Promise<LoadResult> {
  return CLIENT === "wrk" ? wrkLoad(url, run, seconds) : denoLoad(url, run, count, CONCURRENCY);
}

async function wrkLoad(url: string, run: string, seconds: number): Promise<LoadResult> {
  const result = await wrk({
    url,
    seconds,
    connections: CONCURRENCY,
    headers: ["content-type: application/json", `x-event-key: ${SECRET_KEY}`],
    script: EVENT_SCRIPT,
    scriptArgs: [run],
  });
  const failures = new Map<string, number>();
  if (result.non2xx) failures.set("status not 2xx (wrk does not keep which)", result.non2xx);
  if (result.socketErrors) failures.set("0 socket errors", result.socketErrors);
  return {
    ok: result.requests - result.non2xx,
    failed: result.errors,
    failures,
    seconds: result.seconds,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    cpuMicros: result.cpuMicros,
  };
}

async function denoLoad(url: string, run: string, count: number, concurrency: number) {
  const latencies: number[] = [];
  const cpuBefore = cpuMicros([Deno.pid]);
  let next = 0;
  let ok = 0;
  let failed = 0;
  const failures = new Map<string, number>();
  const fail = (what: string) => {
    failed++;
    const key = [...failures.keys()].find((k) => k.startsWith(what.slice(0, 3))) ?? what;
    failures.set(key, (failures.get(key) ?? 0) + 1);
  };
  const started = performance.now();
  const headers = { "content-type": "application/json", "x-event-key": SECRET_KEY };
  const worker = async () => {
    const connection = await HttpConnection.open(url);
    try {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        try {
          const res = await connection.post(
            "/marketing/event",
            headers,
            JSON.stringify(eventBody(run, i)),
          );
          if (res.status === 200 && res.body.includes('"ok":true')) ok++;
          else fail(`${res.status} ${res.body.slice(0, 200)}`);
        } catch (error) {
          fail(`0 ${(error as Error).message}`);
        }
        latencies.push(performance.now() - t0);
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const sorted = latencies.sort((a, b) => a - b);
  return {
    ok,
    failed,
    failures,
    seconds: (performance.now() - started) / 1000,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    cpuMicros: cpuMicros([Deno.pid]) - cpuBefore,
  };
}

async function bulkInsert(db: Database, run: string, count: number) {
  const receivedAt = new Date().toISOString();
  const started = performance.now();
  for (let offset = 0; offset < count; offset += 1000) {
    const rows = [];
    for (let i = offset; i < Math.min(count, offset + 1000); i++) {
      const e = eventBody(run, i);
      rows.push({
        site_id: "demo",
        received_at: receivedAt,
        name: e.name,
        event_id: e.event_id,
        visitor_id: e.visitor_id,
        url: e.url,
        params: e.params,
        value: e.value,
        currency: "EUR",
        source: "server",
      });
    }
    const json = JSON.stringify(rows);
    await db.transaction(async (tx) => {
      await tx.query(
        `insert into ingest.event_ids (site_id, event_id, received_at)
         select site_id, event_id, received_at
           from json_to_recordset($1::json) as r(site_id text, event_id text, received_at timestamptz)
         on conflict do nothing`,
        [json],
      );
      await tx.query(
        `insert into ingest.events
           (site_id, received_at, name, event_id, visitor_id, url, params, value, currency, source)
         select site_id, received_at, name, event_id, visitor_id, url, params, value, currency, source
           from json_to_recordset($1::json) as r(site_id text, received_at timestamptz, name text,
             event_id text, visitor_id text, url text, params json, value bigint, currency text,
             source text)`,
        [json],
      );
    });
  }
  return (performance.now() - started) / 1000;
}

/** Stops a system; the warnings and errors it logged go to stderr, so a failure can be told. */
async function stopAndTell(server: StartedProcess) {
  await server.stop();
  const logged = server.output().stderr.split("\n").filter((line) =>
    /"level":"(warn|error)"/.test(line)
  );
  for (const line of logged.slice(0, 20)) console.error(line);
}

/**
 * Warms up, then drives `url` (for SECONDS with wrk, EVENTS events with the
 * deno client); one report row, stored rows
 * counted (with wrk, events in flight when it stops may be stored unanswered,
 * so at least as many as answered), and the CPU the system's processes (`pids`) spent per stored event:
 * steadier than events/s on a machine shared with other work.
 */
async function httpRow(path: string, url: string, db: Database, pids: number[]) {
  if (CPUS) {
    for (const pid of pids) {
      const pinned = await new Deno.Command("taskset", {
        args: ["-a", "-p", "-c", CPUS, String(pid)],
        stdout: "null",
      }).output();
      if (!pinned.success) throw new Error(`taskset -apc ${CPUS} ${pid} failed`);
    }
  }
  const run = uniqueId("b");
  await load(url, `w${run}`, WARMUP, 3);
  const cpuBefore = cpuMicros(pids);
  // Per thread too, for one process (deno task start): which thread, if any, is full.
  const threadsBefore = pids.length === 1 ? threadTicks(pids[0]) : undefined;
  const result = await load(url, run, EVENTS, SECONDS);
  const threads = threadsBefore
    ? threadShares(threadsBefore, threadTicks(pids[0]), result.seconds)
    : "–";
  for (const [what, n] of result.failures) console.error(`${path}: ${n} failed, first: ${what}`);
  const cpuUs = (cpuMicros(pids) - cpuBefore) / Math.max(1, result.ok);
  const [{ stored }] = await db.query<{ stored: number }>(
    "select count(*)::int as stored from ingest.events where event_id like $1",
    [`${run}-%`],
  );
  return {
    path,
    events: result.ok,
    failed: result.failed,
    seconds: round(result.seconds, 2),
    "events/s": Math.round(result.ok / result.seconds),
    "p50 ms": round(result.p50Ms),
    "p99 ms": round(result.p99Ms),
    "CPU µs/event": Math.round(cpuUs),
    "load CPU µs/event": Math.round(result.cpuMicros / Math.max(1, result.ok)),
    "stored rows": stored,
    "threads, % of a core": threads,
  };
}

export async function run(): Promise<BenchReport> {
  const report: BenchReport = {
    name: "ingest",
    description:
      `POST /marketing/event end to end (gateway → auth → ingest → Postgres, 200 only after commit), ${
        CLIENT === "wrk" ? `${SECONDS} s of wrk (-t1)` : `${EVENTS} events from a JavaScript client`
      }, every event with its own id, ${CONCURRENCY} concurrent connections from a separate process, against a bulk INSERT of ${EVENTS} such rows into the same Postgres.`,
    rows: [],
    notes: [],
  };
  if (!DATABASE_URL) {
    report.notes!.push("needs DATABASE_URL (a Postgres server); nothing measured");
    return report;
  }
  if (CLIENT === "wrk") await ensureWrk();
  const fresh = await freshPostgresUrl();
  const seedFile = await Deno.makeTempFile({ suffix: ".json" });
  const manifest = JSON.parse(
    await Deno.readTextFile(`${ROOT}test/fixtures/contract-example.json`),
  );
  manifest.eventTypes.push({
    name: "purchase",
    params: [{ key: "product", type: "string" }, { key: "quantity", type: "number" }],
    bringsRevenue: true,
    currency: "EUR",
  });
  await Deno.writeTextFile(seedFile, JSON.stringify(manifest));
  const start = (script?: string) =>
    startTask(["--seed", seedFile], {
      DATABASE_URL: fresh.url,
      REDIS_URL: "",
      ...RAISED_LIMITS,
    }, { direct: true, denoFlags: DENO_FLAGS, script });
  const db = await openPostgres(fresh.url, { poolSize: 2 });
  try {
    if (ROWS.has("durable")) {
      const server = await start();
      try {
        report.rows.push(
          await httpRow("HTTP end to end (durable)", server.url, db, [server.process.pid]),
        );
      } finally {
        await stopAndTell(server);
      }
    }
    if (ROWS.has("upkeep-off")) {
      // The same without derived-table upkeep: the bench's own entry point tells
      // ingest-service in-process (no setting of a deployment can).
      const bare = await start("test/bench/start_without_upkeep.ts");
      try {
        report.rows.push(
          await httpRow(
            "HTTP end to end, derived tables not kept (upkeep-off)",
            bare.url,
            db,
            [bare.process.pid],
          ),
        );
      } finally {
        await stopAndTell(bare);
      }
    }
    if (ROWS.has("bulk")) {
      const bulkSeconds = await bulkInsert(db, `${uniqueId("b")}-bulk`, EVENTS);
      report.rows.push({
        path: "bulk INSERT, 1000 rows a statement",
        events: EVENTS,
        failed: 0,
        seconds: round(bulkSeconds, 2),
        "events/s": Math.round(EVENTS / bulkSeconds),
        "p50 ms": null,
        "p99 ms": null,
        "CPU µs/event": null,
        "load CPU µs/event": null,
        "stored rows": EVENTS,
      });
    }
    if (ROWS.has("cluster") && REDIS_URL) {
      const cluster = await startCluster(fresh.url, REDIS_URL, JSON.stringify(manifest));
      try {
        report.rows.push(
          await httpRow(
            "HTTP end to end, one process per service",
            cluster.url,
            db,
            cluster.children.map((c) => c.pid),
          ),
        );
      } finally {
        await cluster.stop();
      }
    } else if (ROWS.has("cluster")) {
      report.notes!.push("set REDIS_URL to also measure one process per service");
    }
    report.notes!.push(
      `machine: ${navigator.hardwareConcurrency} cores, shared with other work; figures are noisy`,
      "the load generator, the system and Postgres share those cores",
    );
  } finally {
    await db.close();
    await fresh.drop();
    await Deno.remove(seedFile);
  }
  return report;
}
