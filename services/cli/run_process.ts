/**
 * What `deno task start` and `deno task service` share: the relaunch with
 * Deno's OpenTelemetry exporter when an OTLP endpoint is set, the
 * configuration read once and the logger, one-line failures (with a hint when
 * a port is taken), and the stop: on SIGTERM or SIGINT the process drains
 * (stops accepting, finishes what is in flight, closes storage) and exits 0.
 */
import { endStopped, relaunchWithOtel, traceTrustProblem } from "./otel_runtime.ts";
import { type Config, ConfigError, loadConfig, type RunMode } from "../lib/config.ts";
import { describeError } from "../lib/errors.ts";
import { createLogger, type Logger } from "../lib/log.ts";
import { ManifestError } from "../lib/manifest/validate.ts";

const encoder = new TextEncoder();

/**
 * Prints one line on stdout. What a process prints on purpose goes straight
 * to its output, not through console: with export on, the runtime exports
 * console.* calls as OTLP log records instead of printing them
 * (OTEL_DENO_CONSOLE=replace, otel_runtime.ts), and the start banner, which
 * names the demo site's keys, belongs on the terminal only.
 */
export function say(line: string): void {
  Deno.stdout.writeSync(encoder.encode(line + "\n"));
}

/** Prints one line on stderr and exits 1. */
export function fail(message: string): never {
  Deno.stderr.writeSync(encoder.encode(message + "\n"));
  Deno.exit(1);
}

export interface Started {
  /** Drains and closes everything the process runs. */
  close(): Promise<void>;
}

export interface ProcessOptions {
  mode: RunMode;
  /** The failure line's start, e.g. "start failed". */
  failedAs: string;
  /** The name telemetry is exported under unless the operator names another. */
  serviceName: string;
  /** Which settings choose the ports, named when a port is taken. */
  portSettings: string;
  /** Whether the process serves the gateway (TRACE_TRUST_PARENT concerns it). */
  servesGateway: boolean;
  /** Starts what the process runs; resolves once it serves. */
  start(config: Config, log: Logger): Promise<Started>;
}

export async function runProcess(options: ProcessOptions): Promise<void> {
  // With an OTLP endpoint set, the run happens in a child with Deno's exporter on.
  const relaunched = await relaunchWithOtel(options.serviceName, options.servesGateway);
  if (relaunched !== undefined) Deno.exit(relaunched);
  let log: Logger | undefined;
  let started: Started;
  try {
    const env = Deno.env.toObject();
    const config = loadConfig(env, options.mode);
    const untrusting = traceTrustProblem(env, options.servesGateway);
    if (untrusting) throw new ConfigError(untrusting);
    log = createLogger(config.logLevel);
    started = await options.start(config, log);
  } catch (error) {
    fail(failureLine(error, options));
  }
  let stopping = false;
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT"];
  const listeners = signals.map((signal) => {
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      log.info("shutting down");
      await started.close();
      listeners.forEach(([s, listener]) => Deno.removeSignalListener(s, listener));
      endStopped(signal);
    };
    return [signal, stop] as const;
  });
  listeners.forEach(([signal, listener]) => Deno.addSignalListener(signal, listener));
}

export function failureLine(
  error: unknown,
  options: Pick<ProcessOptions, "failedAs" | "portSettings">,
): string {
  if (error instanceof ConfigError) return `configuration: ${error.message}`;
  if (error instanceof ManifestError) return `invalid manifest at ${error.path}: ${error.problem}`;
  const inUse = error instanceof Deno.errors.AddrInUse ||
    (error as { code?: string })?.code === "EADDRINUSE";
  const hint = inUse ? ` (is another instance running? ${options.portSettings})` : "";
  return `${options.failedAs}: ${describeError(error)}${hint}`;
}
