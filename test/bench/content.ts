/**
 * `deno task bench content`: the hot page read through the whole system
 * against a bare Deno.serve returning the same bytes, in one run.
 *
 * The system runs as `deno task start --seed FILE` in a child process (all
 * policies on: CORS, key check, rate limits counted with raised limits, ETag,
 * cache headers), once with in-process limits and once with Redis-backed
 * ones. wrk, a separate process, drives each target with 64 connections.
 * Peak memory is the server process's VmHWM from /proc.
 */
import type { BenchReport, BenchRow } from "./main.ts";
import { BENCH_KEY, benchManifest, HOT_PATH } from "./content_site.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { type OwnRedis, redisServerInstalled, startOwnRedis } from "../helpers/redis_server.ts";
import { freePort } from "../helpers/ports.ts";
import { cpuMicros, memoryMb, percentile } from "./measure.ts";
import { ensureWrk, wrk } from "./wrk.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CONNECTIONS = 64;
const WARMUP_S = 3;
const DURATION_S = 10;
const RAISED_LIMITS = {
  RATE_LIMIT_CONTENT_PER_IP: "1000000000",
  RATE_LIMIT_CONTENT_PER_KEY: "1000000000",
  RATE_LIMIT_INVALID_KEY_PER_IP: "1000000000",
};

export interface Server {
  url: string;
  /** The process that serves (not a `deno task` wrapper around it). */
  pid: number;
  stop(): Promise<void>;
}

function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry.name)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Spawns a server and resolves once it prints the line ready matches (group 1: its URL). */
async function spawnServer(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  serverCommand: string,
): Promise<Server> {
  const child = new Deno.Command("deno", {
    args,
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  while (!ready.test(output)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before it was ready:\n${output}`);
    output += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* keep the pipe drained */ }
  })().catch(() => {});
  const url = ready.exec(output)![1];
  // The last match: with OTel export on, the command relaunches itself and
  // the first match is only the wrapper that waits for the real server.
  const pid = [child.pid, ...descendants(child.pid)].findLast((p) => {
    try {
      return Deno.readTextFileSync(`/proc/${p}/cmdline`).includes(serverCommand);
    } catch {
      return false;
    }
  }) ?? child.pid;
  return {
    url,
    pid,
    async stop() {
      for (const p of descendants(child.pid)) {
        try {
          Deno.kill(p, "SIGTERM");
        } catch { /* gone */ }
      }
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/**
 * A stand-in OTLP/HTTP receiver for the tracing-on run: it reads and counts
 * what it is sent and answers 200, so the system pays for building, encoding
 * and sending every span and metric, and nothing else runs beside it.
 */
export function startOtlpSink() {
  let requests = 0;
  let bytes = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    bytes += (await req.arrayBuffer()).byteLength;
    requests++;
    return new Response(null, { status: 200 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received: () => ({ requests, bytes }),
    close: () => server.shutdown(),
  };
}

export function startSystem(
  seedFile: string,
  redisUrl: string | undefined,
  databaseUrl: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<Server> {
  const env = {
    PORT: String(freePort()),
    AUTH_URL: `http://127.0.0.1:${freePort()}`,
    CONTENT_URL: `http://127.0.0.1:${freePort()}`,
    INGEST_URL: `http://127.0.0.1:${freePort()}`,
    CRM_DATA_DIR: Deno.makeTempDirSync({ prefix: "crm-bench-" }),
    DATABASE_URL: databaseUrl ?? "",
    REDIS_URL: redisUrl ?? "",
    REDIS_KEY_PREFIX: `crmbench${Date.now().toString(36)}:`,
    LOG_LEVEL: "warn",
    ...RAISED_LIMITS,
    ...extraEnv,
  };
  return spawnServer(
    ["task", "-q", "start", "--seed", seedFile],
    env,
    /gateway listening on (\S+)/,
    "services/cli/start.ts",
  );
}

export function startBare(bodyFile: string, env: Record<string, string> = {}): Promise<Server> {
  return spawnServer(
    ["run", "-A", "test/bench/bare_server.ts", String(freePort()), bodyFile],
    env,
    /bare server listening on (\S+)/,
    "bare_server.ts",
  );
}

export async function measure(
  target: string,
  server: Server,
  headers: string[] = [],
  path = HOT_PATH,
): Promise<BenchRow & { rps: number; cpuUs: number }> {
  const url = server.url + path;
  const drive = (seconds: number) =>
    wrk({
      url,
      seconds,
      connections: CONNECTIONS,
      headers: [`x-crm-key: ${BENCH_KEY}`, ...headers],
    });
  await drive(WARMUP_S);
  const cpuBefore = cpuMicros([server.pid]);
  const result = await drive(DURATION_S);
  const cpuUs = (cpuMicros([server.pid]) - cpuBefore) / Math.max(1, result.requests);
  return {
    target,
    "req/s": Math.round(result.rps),
    "p50 ms": Math.round(result.p50Ms * 100) / 100,
    "p99 ms": Math.round(result.p99Ms * 100) / 100,
    // The server's own CPU per answer: it moves far less with the machine's
    // load than req/s, which wrk and other work on the same cores pull down.
    "CPU µs/req": Math.round(cpuUs),
    "peak RSS MB": memoryMb(server.pid, "VmHWM"),
    errors: result.errors,
    rps: result.rps,
    cpuUs,
  };
}

const COLD_READS = 300;
/** The sampling ratios of the tracing-on rows (parentbased_traceidratio; wrk sends no traceparent). */
const SAMPLING = [1, 0.1, 0.01];

/**
 * Cache misses one after another: every request carries a query parameter
 * not seen before, so the gateway's response cache misses and the answer
 * comes from content-service (its site cache, rendering) over RPC.
 */
async function coldReads(server: Server): Promise<BenchRow> {
  const times: number[] = [];
  const run = Date.now().toString(36);
  for (let i = 0; i < COLD_READS + 20; i++) {
    const started = performance.now();
    const response = await fetch(`${server.url}${HOT_PATH}?cold=${run}${i}`, {
      headers: { "x-crm-key": BENCH_KEY },
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`cold read answered ${response.status}`);
    // The first 20 warm the connection and the code.
    if (i >= 20) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => percentile(times, p);
  return {
    target: "system, cold read (cache miss), one at a time",
    "req/s": Math.round(1000 / (times.reduce((a, b) => a + b, 0) / times.length)),
    "p50 ms": Math.round(at(0.5) * 100) / 100,
    "p99 ms": Math.round(at(0.99) * 100) / 100,
    "CPU µs/req": null,
    "peak RSS MB": memoryMb(server.pid, "VmHWM"),
    errors: 0,
  };
}

export async function run(): Promise<BenchReport> {
  await ensureWrk();
  const dir = await Deno.makeTempDir({ prefix: "crm-bench-content-" });
  const seedFile = `${dir}/site.json`;
  await Deno.writeTextFile(seedFile, JSON.stringify(benchManifest()));
  const notes: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const start = async (redisUrl: string | undefined, extraEnv: Record<string, string> = {}) => {
    const pg = DATABASE_URL ? await freshPostgresUrl() : undefined;
    if (pg) cleanups.push(pg.drop);
    const system = await startSystem(seedFile, redisUrl, pg?.url, extraEnv);
    cleanups.unshift(system.stop);
    return system;
  };
  const bareRuns: (BenchRow & { rps: number })[] = [];
  const systems: (BenchRow & { rps: number })[] = [];
  let cold: BenchRow | undefined;
  try {
    // The system first: the bare server then answers its exact bytes.
    const local = await start(undefined);
    const answer = await fetch(local.url + HOT_PATH, { headers: { "x-crm-key": BENCH_KEY } });
    if (answer.status !== 200) throw new Error(`hot page answered ${answer.status}`);
    const body = new Uint8Array(await answer.arrayBuffer());
    await Deno.writeFile(`${dir}/body.json`, body);
    const compressed = await fetch(local.url + HOT_PATH, {
      headers: { "x-crm-key": BENCH_KEY, "accept-encoding": "br" },
    });
    await compressed.arrayBuffer();
    notes.push(
      `hot page: GET ${HOT_PATH}, ${body.byteLength} bytes (10 sections × 10 blocks, 3 languages)` +
        `, ${compressed.headers.get("content-length")} bytes in br`,
    );
    const bare = await startBare(`${dir}/body.json`);
    cleanups.unshift(bare.stop);

    bareRuns.push(await measure("bare Deno.serve, same bytes", bare));
    systems.push(await measure("system, in-process limits", local));
    // A browser's read: the answer in br, compressed once and kept beside the cached body.
    systems.push(
      await measure("system, in-process limits, client asks for br", local, [
        "accept-encoding: gzip, deflate, br",
      ]),
    );
    // What a site generator reads: the page index, and the changes feed since a cursor.
    systems.push(
      await measure("system, in-process limits, page index", local, [], "/content/v1/pages"),
    );
    const feed = await fetch(`${local.url}/content/v1/changes`, {
      headers: { "x-crm-key": BENCH_KEY },
    });
    if (feed.status !== 200) throw new Error(`changes answered ${feed.status}`);
    const { cursor } = await feed.json();
    systems.push(
      await measure(
        "system, in-process limits, changes since a cursor",
        local,
        [],
        `/content/v1/changes?since=${cursor}`,
      ),
    );
    cold = await coldReads(local);
    await local.stop();
    let own: OwnRedis | undefined;
    const redisUrl = REDIS_URL ??
      (await redisServerInstalled() ? (own = await startOwnRedis()).url : undefined);
    if (own) cleanups.push(own.close);
    if (redisUrl) {
      const untraced = await start(redisUrl);
      systems.push(await measure("system, Redis-backed limits", untraced));
      await untraced.stop();
      notes.push(`Redis: ${REDIS_URL ? "REDIS_URL" : "a redis-server started for the run"}`);
      // The same with export on at three sampling ratios (the chart's default
      // is 10%): the sampled spans and every metric go out over OTLP.
      const sink = startOtlpSink();
      cleanups.push(sink.close);
      const offBefore = systems[systems.length - 1];
      const tracedRows: (BenchRow & { rps: number })[] = [];
      for (const ratio of SAMPLING) {
        const traced = await start(redisUrl, {
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
          OTEL_TRACES_SAMPLER_ARG: String(ratio),
        });
        const label = `${ratio * 100}%`;
        const row = await measure(`system, Redis-backed limits, tracing at ${label}`, traced);
        systems.push(row);
        tracedRows.push(row);
        await traced.stop();
      }
      // Tracing off again: the tracing rows are judged against the mean of
      // the two, as the machine's load drifts during the run.
      const again = await start(redisUrl);
      const offAfter = await measure("system, Redis-backed limits (again)", again);
      systems.push(offAfter);
      await again.stop();
      const untracedRps = (offBefore.rps + offAfter.rps) / 2;
      const shares = tracedRows.map((row, i) =>
        `${SAMPLING[i] * 100}%: ${Math.round((row.rps / untracedRps) * 100)}%`
      );
      const { requests, bytes } = sink.received();
      notes.push(
        `tracing on, share of the mean throughput of the two tracing-off rows at each ` +
          `sampling ratio: ` +
          `${shares.join(", ")} (target at 10%: ≥ 90%); the OTLP stand-in received ${requests} ` +
          `exports, ${Math.round(bytes / 1e6)} MB`,
      );
    } else {
      notes.push("no Redis row: set REDIS_URL or install redis-server");
    }
    // The bare server again at the end: the machine's load drifts during a run.
    bareRuns.push(await measure("bare Deno.serve, same bytes", bare));
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }

  const bareRps = bareRuns.reduce((sum, r) => sum + r.rps, 0) / bareRuns.length;
  const [before, after] = bareRuns;
  const rows = [
    { ...before, target: "bare Deno.serve, same bytes (before)" },
    ...systems,
    ...(after ? [{ ...after, target: "bare Deno.serve, same bytes (after)" }] : []),
  ];
  const bareP99 = bareRuns.reduce((sum, r) => sum + (r["p99 ms"] as number), 0) / bareRuns.length;
  const table: BenchRow[] = rows.map(({ rps, cpuUs: _cpuUs, ...row }) => ({
    ...row,
    "vs bare": `${Math.round((rps / bareRps) * 100)}%`,
    "p99 vs bare": `${Math.round(((row["p99 ms"] as number) / bareP99) * 100)}%`,
  }));
  if (cold) table.push({ ...cold, "vs bare": null, "p99 vs bare": null });
  notes.push(
    "vs bare: against the mean of the two bare runs (the machine's load drifts); " +
      "p99 vs bare likewise",
    "page index and changes rows: GET /content/v1/pages and /content/v1/changes?since= a " +
      "cursor of the seeded site, their own bytes (vs bare compares with the page's bare server)",
    `cold read: ${COLD_READS} requests one after another from this process, each with a ` +
      "query parameter not seen before (target p99 ≤ 20 ms)",
  );
  const [cpus, load] = [navigator.hardwareConcurrency, Deno.loadavg().map((l) => l.toFixed(2))];
  notes.push(
    DATABASE_URL
      ? "storage: a fresh Postgres database (DATABASE_URL)"
      : "storage: embedded PGlite on a fresh data folder (its initdb runs in a child process " +
        "that exits before the server starts; see `deno task bench footprint`)",
    `wrk -t1 -c${CONNECTIONS}, ${WARMUP_S} s warm-up then ${DURATION_S} s measured per target`,
    "limits raised to 10^9 a minute: still counted on every request, never reached",
    "target: system ≥ 60% of bare throughput with every policy on, p99 ≤ 2 × bare p99, " +
      "peak RSS < 350 MB",
    `machine: ${cpus} CPUs, load average ${load.join(" ")} at the end (wrk shares the CPUs)`,
  );
  return {
    name: "content",
    description: "Hot page read (GET /content/v1/pages/home with x-crm-key) through " +
      "`deno task start`, against a bare Deno.serve returning the same bytes.",
    rows: table,
    notes,
  };
}
