/**
 * wrk (Debian's package) as the benchmarks' load generator: a separate C
 * process that costs far less CPU per request than a client in JavaScript,
 * so on this 2-core machine more of the cores go to the system measured.
 */

/** What one wrk run measured. */
export interface WrkResult {
  rps: number;
  /** Answers received (any status). */
  requests: number;
  /** How long wrk drove the load. */
  seconds: number;
  /** Answers that were not 2xx or 3xx. */
  non2xx: number;
  /** Connect, read, write and timeout errors. */
  socketErrors: number;
  /** non2xx + socketErrors. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time wrk itself used (user + system), in µs. */
  cpuMicros: number;
}

export interface WrkRun {
  url: string;
  seconds: number;
  connections: number;
  /** Header lines ("name: value") sent with every request. */
  headers?: string[];
  /** A Lua script's text (wrk's `-s`), e.g. one that makes each request's body. */
  script?: string;
  /** Arguments the script's init(args) receives. */
  scriptArgs?: string[];
}

/** wrk from Debian's packages: installed here when missing and we are root. */
export async function ensureWrk(): Promise<void> {
  const has = async () => {
    try {
      return (await new Deno.Command("wrk", { args: ["--version"], stderr: "null", stdout: "null" })
        .output()).code !== 127;
    } catch {
      return false;
    }
  };
  if (await has()) return;
  if (Deno.uid() === 0) {
    console.error("wrk is missing; installing it from Debian's packages (apt-get install wrk)");
    const run = (args: string[]) =>
      new Deno.Command("apt-get", { args, env: { DEBIAN_FRONTEND: "noninteractive" } }).output();
    await run(["update", "-qq"]);
    await run(["install", "-y", "-qq", "wrk"]);
    if (await has()) return;
  }
  throw new Error("this benchmark needs wrk: install it with `apt-get install wrk`");
}

const MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const duration = (text: string) => {
  const [, n, unit] = /([\d.]+)(us|ms|s|m)/.exec(text)!;
  return Number(n) * MS[unit];
};

/**
 * CPU time (user + system) of this process's children that have been waited
 * for, in µs: across one wrk run (nothing else waited for meanwhile), wrk's.
 */
function waitedChildrenCpuMicros(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime and cstime, fields 16 and 17 of stat(5), in clock ticks (100 a second here).
  return (Number(fields[13]) + Number(fields[14])) * 10_000;
}

/** The figures of wrk's `--latency` output; throws when it cannot be read. */
export function readWrkOutput(out: string): Omit<WrkResult, "cpuMicros"> {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1];
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1];
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/
    .exec(out)?.slice(1).reduce((a, b) => a + Number(b), 0) ?? 0;
  if (!rps || !p50 || !p99) throw new Error(`cannot read wrk's output:\n${out}`);
  const [, requests, took] = /(\d+) requests in ([\d.]+\w+)/.exec(out) ?? [];
  return {
    rps,
    requests: Number(requests ?? 0),
    seconds: took ? duration(took) / 1000 : NaN,
    non2xx,
    socketErrors,
    errors: non2xx + socketErrors,
    p50Ms: duration(p50),
    p99Ms: duration(p99),
  };
}

/** Runs wrk with one thread and answers what it measured. */
export async function wrk(run: WrkRun): Promise<WrkResult> {
  const scriptFile = run.script === undefined
    ? undefined
    : await Deno.makeTempFile({ suffix: ".lua" });
  try {
    if (scriptFile) await Deno.writeTextFile(scriptFile, run.script!);
    const cpuBefore = waitedChildrenCpuMicros();
    const { stdout, code } = await new Deno.Command("wrk", {
      args: [
        "-t1",
        `-c${run.connections}`,
        `-d${run.seconds}s`,
        "--latency",
        ...(run.headers ?? []).flatMap((h) => ["-H", h]),
        ...(scriptFile ? ["-s", scriptFile] : []),
        run.url,
        ...(run.scriptArgs?.length ? ["--", ...run.scriptArgs] : []),
      ],
      stderr: "inherit",
    }).output();
    const cpuMicros = waitedChildrenCpuMicros() - cpuBefore;
    const out = new TextDecoder().decode(stdout);
    if (code !== 0) throw new Error(`wrk failed:\n${out}`);
    return { ...readWrkOutput(out), cpuMicros };
  } finally {
    if (scriptFile) await Deno.remove(scriptFile);
  }
}
