/** Running the project's commands as a user does: `deno task ...` in a child process. */
import { V8_FLAGS_ARG } from "../../services/cli/v8_flags.ts";
import { registerGateway } from "./openapi.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** `deno run` arguments of one service alone, as `deno task service NAME` runs it. */
export const serviceArgs = (
  name: string,
) => ["run", V8_FLAGS_ARG, "-A", "services/cli/service.ts", name];

export interface TaskResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runTask(
  args: string[],
  env: Record<string, string> = {},
): Promise<TaskResult> {
  return runCommand("deno", ["task", "-q", ...args], { env: { LOG_LEVEL: "error", ...env } });
}

/**
 * Runs any command from the repository's root (or `cwd`) to its end, with
 * text on stdin when given; resolves with its exit code and what it printed.
 */
export async function runCommand(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string } = {},
): Promise<TaskResult> {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdin: options.input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.input));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

export interface StartedProcess {
  url: string;
  /** Everything printed on stdout up to the listening line. */
  banner: string;
  process: Deno.ChildProcess;
  /** Everything the process printed so far: stdout (banner included) and stderr (the logs). */
  output(): { stdout: string; stderr: string };
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `deno task start`, resolving once it prints `gateway listening on URL`.
 * With `direct`, runs the start script itself (what the task runs after
 * building the widget), so that a SIGKILL reaches the system process and not
 * only the task runner.
 */
export async function startTask(
  args: string[],
  env: Record<string, string>,
  options: {
    direct?: boolean;
    /** With `direct`: flags for `deno run` (a benchmark's --v8-flags, say). */
    denoFlags?: string[];
    /** With `direct`: the entry point, when not services/cli/start.ts (a benchmark's own). */
    script?: string;
  } = {},
): Promise<StartedProcess> {
  const command = options.direct
    ? [
      "run",
      V8_FLAGS_ARG,
      "-A",
      ...(options.denoFlags ?? []),
      options.script ?? "services/cli/start.ts",
    ]
    : ["task", "-q", "start"];
  const child = new Deno.Command("deno", {
    args: [...command, ...args],
    cwd: ROOT,
    env: {
      PORT: "0",
      AUTH_URL: "http://127.0.0.1:0",
      CONTENT_URL: "http://127.0.0.1:0",
      INGEST_URL: "http://127.0.0.1:0",
      LOG_LEVEL: "error",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Read from the start, so a chatty log level never fills the pipe before the banner.
  let stderr = "";
  child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        stderr += chunk;
      },
    }),
  ).catch(() => {});
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let banner = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 60_000);
  while (!/gateway listening on (\S+)/.test(banner)) {
    const { value, done } = await reader.read();
    if (done) {
      clearTimeout(deadline);
      await child.status;
      throw new Error(`start exited before listening:\n${banner}\n${stderr}`);
    }
    banner += value;
  }
  clearTimeout(deadline);
  // Keep draining so the child never blocks on a full pipe; what it prints is kept for output().
  let stdout = banner;
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += value;
    }
  })().catch(() => {});
  const url = /gateway listening on (\S+)/.exec(banner)![1];
  const unregister = registerGateway(url);
  return {
    url,
    banner,
    process: child,
    output: () => ({ stdout, stderr }),
    async stop() {
      unregister();
      child.kill("SIGTERM");
      return (await child.status).code;
    },
  };
}

/**
 * Starts one service alone, as a cluster runs it (`deno task service NAME`'s
 * script, so a SIGKILL reaches the service itself), and resolves once it
 * prints that it listens.
 */
export async function spawnService(
  name: "auth" | "content" | "ingest",
  env: Record<string, string>,
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("deno", {
    args: serviceArgs(name),
    cwd: ROOT,
    env: { HOST: "127.0.0.1", LOG_LEVEL: "error", ...env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes(`${name} listening on`)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${name} exited early: ${out}`);
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return child;
}

export interface RunningProcess {
  /** Where it listens, as it printed. */
  url: string;
  /** The service script's process (a child relaunched for telemetry runs under it). */
  pid: number;
  /** Everything it wrote on stderr lately (its JSON log lines). */
  stderr(): string;
  /** SIGTERM (passed on to a child relaunched for telemetry); resolves with the exit code. */
  stop(): Promise<number>;
  /** SIGKILL: the process dies at once, mid-request; resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * Reads a child's output as it comes (so the pipe never fills) and keeps its
 * last `chars` characters: what the child said, for an error message.
 */
export function keepTail(
  stream: ReadableStream<Uint8Array<ArrayBuffer>>,
  chars: number,
): () => string {
  let text = "";
  (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text = (text + chunk).slice(-chars);
    }
  })().catch(() => {});
  return () => text;
}

/** Processes started by startService and not stopped yet. */
export const runningServices = new Set<RunningProcess>();

/**
 * `deno task service NAME`'s script, as a cluster runs it, for any of the
 * four services; resolves once it prints where it listens (GRPC_PORT or PORT
 * 0 picks a free port).
 */
export async function startService(
  name: "gateway" | "auth" | "content" | "ingest",
  env: Record<string, string>,
): Promise<RunningProcess> {
  const child = new Deno.Command("deno", {
    args: serviceArgs(name),
    cwd: ROOT,
    env: { HOST: "127.0.0.1", LOG_LEVEL: "error", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = keepTail(child.stderr, 20_000);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const listening = new RegExp(`${name} listening on (\\S+)`);
  while (!listening.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${name} exited early: ${out}\n${stderr()}`);
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const running: RunningProcess = {
    url: listening.exec(out)![1],
    pid: child.pid,
    stderr,
    async stop() {
      runningServices.delete(running);
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      return (await child.status).code;
    },
    async kill() {
      runningServices.delete(running);
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    },
  };
  runningServices.add(running);
  return running;
}
