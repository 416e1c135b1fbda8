/**
 * `deno task bench footprint`: memory of each process at idle. Each service
 * alone (`deno task service NAME`, as a cluster runs it, on a fresh migrated
 * Postgres database: needs DATABASE_URL) and `deno task start` on a fresh
 * data folder with embedded PGlite, plus the peak of the short-lived child
 * that creates that folder's files (PGlite's initdb). The content benchmark
 * reports the system's peak under load.
 */
import type { BenchReport, BenchRow } from "./main.ts";
import { DATABASE_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { runCommand, startService, startTask } from "../helpers/process.ts";
import { freePort } from "../helpers/ports.ts";
import { memoryMb, statusFieldMb } from "./measure.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** How long a process runs before it is read: startup garbage collected, timers settled. */
const IDLE_S = Number(Deno.env.get("BENCH_FOOTPRINT_IDLE_S") ?? 20);
const SERVICE_TARGET_MB = 120;

/** Waits IDLE_S once a started process listens, reads its memory, stops it. */
async function idleMemory(
  started: Promise<{ pid: number; stop(): Promise<number> }>,
): Promise<{ peak: number; rss: number }> {
  const running = await started;
  try {
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const text = Deno.readTextFileSync(`/proc/${running.pid}/status`);
    return { peak: statusFieldMb(text, "VmHWM"), rss: statusFieldMb(text, "VmRSS") };
  } finally {
    await running.stop();
  }
}

/** The peak memory of a process that runs to its end, polled from /proc while it runs. */
async function peakOfRun(args: string[]): Promise<{ peak: number; seconds: number }> {
  const started = performance.now();
  const child = new Deno.Command("deno", { args, cwd: ROOT, stdout: "null", stderr: "null" })
    .spawn();
  let peak = 0;
  let done = false;
  child.status.then(() => done = true);
  while (!done) {
    try {
      peak = Math.max(peak, memoryMb(child.pid, "VmHWM"));
    } catch { /* exited between the test and the read */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!(await child.status).success) throw new Error(`${args.join(" ")} failed`);
  return { peak, seconds: (performance.now() - started) / 1000 };
}

export async function run(): Promise<BenchReport> {
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  const dir = await Deno.makeTempDir({ prefix: "crm-bench-footprint-" });
  try {
    const ports = {
      auth: freePort(),
      content: freePort(),
      ingest: freePort(),
      gateway: freePort(),
    };
    const urls = {
      PORT: String(ports.gateway),
      AUTH_URL: `http://127.0.0.1:${ports.auth}`,
      CONTENT_URL: `http://127.0.0.1:${ports.content}`,
      INGEST_URL: `http://127.0.0.1:${ports.ingest}`,
    };

    // The whole system on a fresh folder: the init child first, then the server.
    await Deno.mkdir(`${dir}/initdb-only`);
    const initdb = await peakOfRun([
      "run",
      "-A",
      "services/lib/db/pglite_init.ts",
      `${dir}/initdb-only/pglite`,
    ]);
    rows.push({
      process: "PGlite initdb child (fresh folder only, then exits)",
      "peak RSS MB": initdb.peak,
      "RSS at idle MB": null,
      "target MB": null,
      seconds: Math.round(initdb.seconds * 10) / 10,
    });
    const system = await idleMemory(
      startTask([], { ...urls, CRM_DATA_DIR: `${dir}/system`, DATABASE_URL: "", REDIS_URL: "" }, {
        direct: true,
      }).then((started) => ({ pid: started.process.pid, stop: started.stop })),
    );
    rows.push({
      process: "deno task start, embedded PGlite, fresh folder, idle",
      "peak RSS MB": system.peak,
      "RSS at idle MB": system.rss,
      "target MB": 350,
      seconds: null,
    });

    if (!DATABASE_URL) {
      notes.push("set DATABASE_URL to measure each service alone (they need Postgres)");
    } else {
      const pg = await freshPostgresUrl();
      try {
        const env = { DATABASE_URL: pg.url, REDIS_URL: Deno.env.get("REDIS_URL") ?? "" };
        const migrated = await runCommand("deno", [
          "run",
          "-A",
          "services/cli/admin.ts",
          "migrate",
          "--database",
        ], { env });
        if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
        for (const name of ["auth", "content", "ingest", "gateway"] as const) {
          if (name === "auth" && !env.REDIS_URL) {
            notes.push("auth-service needs REDIS_URL; not measured");
            continue;
          }
          const memory = await idleMemory(
            startService(name, { ...env, ...urls, GRPC_PORT: String(ports[name]) }),
          );
          rows.push({
            process: `deno task service ${name}, idle`,
            "peak RSS MB": memory.peak,
            "RSS at idle MB": memory.rss,
            "target MB": SERVICE_TARGET_MB,
            seconds: null,
          });
        }
      } finally {
        await pg.drop();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  notes.push(
    `each process read ${IDLE_S} s after it printed that it listens (VmHWM and VmRSS from /proc)`,
    "services alone run one at a time, so none shares its startup with another",
  );
  return {
    name: "footprint",
    description: "Memory of `deno task start` on a fresh data folder and of each service alone " +
      "(`deno task service NAME`) at idle.",
    rows,
    notes,
  };
}
