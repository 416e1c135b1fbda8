/**
 * `deno task test`: vitest with one safeguard. Deno sometimes crashes a test
 * worker process as it exits (a SIGSEGV or SIGABRT from the runtime itself,
 * seen with embedded PGlite, after every test in the file had passed). That is
 * a fault of the runtime, not a test result, so the files whose worker was
 * killed by a signal are run once more and judged on that second run. Any
 * failing test, any other unhandled error, or a second crash still fails the
 * run, and every rerun is reported.
 *
 * Arguments are vitest's: `deno task test test/foo_test.ts -t "name"`.
 */
import { parseCLI, startVitest } from "vitest/node";

const CONFIG = new URL("./vitest.config.ts", import.meta.url).pathname;
const CRASH = /Worker exited unexpectedly with signal (SIG[A-Z]+).*?test file (\S+)/;

interface Outcome {
  /** Files with a failing test or a failing hook. */
  failedFiles: string[];
  /** Files whose worker a signal killed, with the signal. */
  crashed: Map<string, string>;
  /** Unhandled errors that are not worker crashes. */
  otherErrors: string[];
}

function messageOf(error: unknown): string {
  if (error && typeof error === "object") {
    const e = error as { message?: string; cause?: unknown };
    return [e.message ?? "", e.cause ? messageOf(e.cause) : ""].join(" ");
  }
  return String(error);
}

async function runOnce(filters: string[], options: Record<string, unknown>): Promise<Outcome> {
  const vitest = await startVitest("test", filters, {
    ...options,
    config: CONFIG,
    watch: false,
    run: true,
  });
  const failedFiles = vitest.state.getFiles()
    .filter((file) => file.result?.state === "fail")
    .map((file) => file.filepath);
  const crashed = new Map<string, string>();
  const otherErrors: string[] = [];
  for (const error of vitest.state.getUnhandledErrors()) {
    const text = messageOf(error);
    const crash = CRASH.exec(text);
    if (crash) crashed.set(crash[2], crash[1]);
    else otherErrors.push(text);
  }
  await vitest.close();
  return { failedFiles, crashed, otherErrors };
}

const { filter, options } = parseCLI(["vitest", ...Deno.args]);
const first = await runOnce(filter, options as Record<string, unknown>);
let ok = first.otherErrors.length === 0 &&
  first.failedFiles.every((file) => first.crashed.has(file));

if (ok && first.crashed.size > 0) {
  for (const [file, signal] of first.crashed) {
    console.warn(
      `\n!! the Deno runtime killed the worker of ${file} with ${signal}; running it again`,
    );
  }
  // The rerun keeps the name filter, so it runs the same tests of those files.
  const again = await runOnce([...first.crashed.keys()], options as Record<string, unknown>);
  ok = again.failedFiles.length === 0 && again.crashed.size === 0 &&
    again.otherErrors.length === 0;
  console.warn(
    ok
      ? `!! rerun passed: ${first.crashed.size} file(s) crashed once in the runtime and passed on the second run`
      : "!! rerun failed",
  );
}

Deno.exit(ok ? 0 : 1);
