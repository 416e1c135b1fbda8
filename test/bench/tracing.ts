/**
 * `deno task bench tracing`: what OpenTelemetry export costs a request, and
 * whose cost it is. Two targets answer the same bytes under wrk:
 *
 * - `bare`: the minimal reproduction, a bare Deno.serve handler
 *   (test/bench/bare_server.ts) with no code of ours, so whatever export costs
 *   it is the runtime's;
 * - `system`: the hot page read through `deno task start` with Redis-backed
 *   limits (the content benchmark's tracing rows).
 *
 * Each runs with export off, with metrics only (`OTEL_DENO_TRACING=false`),
 * and with traces at 0% (tracing on, nothing sampled), 1%, 10% and 100% of
 * new traces (`parentbased_traceidratio`; wrk sends no traceparent), every
 * export going to a stand-in OTLP receiver. The settings run in interleaved
 * rounds (each round every target and setting once, in turn), so the load of
 * a shared machine falls on all of them alike; the table gives each row's
 * median over the rounds. The figure that moves least with the machine's load
 * is the server's own CPU time per answer: a row's share is the tracing-off
 * CPU per answer over its own, the throughput one core would keep.
 *
 * BENCH_TRACING_ROUNDS (default 3), BENCH_TRACING_TARGETS (`bare,system`).
 */
import type { BenchReport, BenchRow } from "./main.ts";
import { BENCH_KEY, benchManifest, HOT_PATH } from "./content_site.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { type OwnRedis, redisServerInstalled, startOwnRedis } from "../helpers/redis_server.ts";
import { measure, type Server, startBare, startOtlpSink, startSystem } from "./content.ts";
import { ensureWrk } from "./wrk.ts";

/** One setting of the runtime's exporter: the environment it adds. */
interface Setting {
  name: string;
  env: (sink: string) => Record<string, string>;
}

const traced = (ratio: number) => (sink: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: sink,
  OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
  OTEL_TRACES_SAMPLER_ARG: String(ratio),
});

export const SETTINGS: Setting[] = [
  { name: "export off", env: () => ({}) },
  {
    name: "metrics only",
    env: (sink) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sink, OTEL_DENO_TRACING: "false" }),
  },
  { name: "traces at 0%", env: traced(0) },
  { name: "traces at 1%", env: traced(0.01) },
  { name: "traces at 10%", env: traced(0.1) },
  { name: "traces at 100%", env: traced(1) },
];

interface Sample {
  cpuUs: number;
  rps: number;
  p99: number;
  errors: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The rows of one target: medians over the rounds and each row's share of export off. */
export function tracingRows(target: string, samples: Map<string, Sample[]>): BenchRow[] {
  const off = samples.get(SETTINGS[0].name)!;
  const offCpu = median(off.map((s) => s.cpuUs));
  const offRps = median(off.map((s) => s.rps));
  return SETTINGS.map(({ name }) => {
    const runs = samples.get(name) ?? [];
    const cpu = median(runs.map((s) => s.cpuUs));
    const rps = median(runs.map((s) => s.rps));
    return {
      target,
      setting: name,
      "CPU µs/req": Math.round(cpu * 10) / 10,
      "CPU µs/req, per round": runs.map((s) => Math.round(s.cpuUs)).join(", "),
      "share (CPU)": `${Math.round((offCpu / cpu) * 100)}%`,
      "req/s": Math.round(rps),
      "share (req/s)": `${Math.round((rps / offRps) * 100)}%`,
      "p99 ms": Math.round(median(runs.map((s) => s.p99)) * 100) / 100,
      errors: runs.reduce((sum, s) => sum + s.errors, 0),
    };
  });
}

export async function run(): Promise<BenchReport> {
  await ensureWrk();
  const rounds = Number(Deno.env.get("BENCH_TRACING_ROUNDS") ?? "3");
  const targets = (Deno.env.get("BENCH_TRACING_TARGETS") ?? "bare,system").split(",");
  const dir = await Deno.makeTempDir({ prefix: "crm-bench-tracing-" });
  const seedFile = `${dir}/site.json`;
  await Deno.writeTextFile(seedFile, JSON.stringify(benchManifest()));
  const cleanups: (() => Promise<void>)[] = [];
  const samples = new Map<string, Map<string, Sample[]>>(
    targets.map((t) => [t, new Map(SETTINGS.map((s) => [s.name, []]))]),
  );
  const loads: number[] = [];
  const sink = startOtlpSink();
  cleanups.push(sink.close);
  try {
    let own: OwnRedis | undefined;
    const redisUrl = REDIS_URL ??
      (await redisServerInstalled() ? (own = await startOwnRedis()).url : undefined);
    if (own) cleanups.push(own.close);
    const startSystemWith = async (env: Record<string, string>) => {
      const pg = DATABASE_URL ? await freshPostgresUrl() : undefined;
      const system = await startSystem(seedFile, redisUrl, pg?.url, env);
      return { ...system, stop: () => system.stop().then(() => pg?.drop()) };
    };
    // The bare server answers the system's exact bytes for the hot page.
    const first = await startSystemWith({});
    const answer = await fetch(first.url + HOT_PATH, { headers: { "x-crm-key": BENCH_KEY } });
    if (answer.status !== 200) throw new Error(`hot page answered ${answer.status}`);
    await Deno.writeFile(`${dir}/body.json`, new Uint8Array(await answer.arrayBuffer()));
    await first.stop();
    const start: Record<string, (env: Record<string, string>) => Promise<Server>> = {
      // The bare server has no relaunch of its own: the runtime's exporter is
      // on when OTEL_DENO is set as it boots.
      bare: (env) =>
        startBare(
          `${dir}/body.json`,
          env.OTEL_EXPORTER_OTLP_ENDPOINT ? { ...env, OTEL_DENO: "true" } : env,
        ),
      system: startSystemWith,
    };
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        for (const setting of SETTINGS) {
          const server = await start[target](setting.env(sink.url));
          try {
            const row = await measure(`${target}, ${setting.name}`, server);
            samples.get(target)!.get(setting.name)!.push({
              cpuUs: row.cpuUs,
              rps: row.rps,
              p99: row["p99 ms"] as number,
              errors: row.errors as number,
            });
            console.error(
              `[tracing] round ${round + 1}/${rounds} ${target}, ${setting.name}: ` +
                `${row.cpuUs.toFixed(1)} µs/req, ${row["req/s"]} req/s`,
            );
          } finally {
            await server.stop();
          }
          loads.push(Deno.loadavg()[0]);
        }
      }
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const { requests, bytes } = sink.received();
  const rows = targets.flatMap((t) => tracingRows(t, samples.get(t)!));
  return {
    name: "tracing",
    description: "What export costs a request: a bare Deno.serve handler (the minimal " +
      "reproduction, no code of ours) and the hot page read through `deno task start`, with " +
      "export off, metrics only, and traces at 0%, 1%, 10% and 100% " +
      "(parentbased_traceidratio, no incoming traceparent), in interleaved rounds.",
    rows,
    notes: [
      `${rounds} rounds; every figure is the median over them; share (CPU): export off's CPU ` +
      `per answer over the row's, the throughput one core would keep (target for the ` +
      `system at 10%: ≥ 90%)`,
      `load average (1 min) after each measurement: ${Math.min(...loads).toFixed(1)} to ` +
      `${Math.max(...loads).toFixed(1)}, median ${median(loads).toFixed(1)}, on ` +
      `${navigator.hardwareConcurrency} CPUs (wrk shares them)`,
      `the OTLP stand-in received ${requests} exports, ${Math.round(bytes / 1e6)} MB`,
      DATABASE_URL
        ? "storage: a fresh Postgres database per system run (DATABASE_URL)"
        : "storage: embedded PGlite on a fresh data folder per system run",
    ],
  };
}
