/**
 * OpenTelemetry export. Deno's runtime carries an OTLP exporter (traces of
 * Deno.serve and fetch, console logs, metrics, and spans made through
 * `@opentelemetry/api`), but it starts only when `OTEL_DENO=true` is in the
 * environment as the runtime boots. Operators set the standard settings
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, ...), so when one of
 * the endpoints is set and `OTEL_DENO` is not, the command runs itself once
 * more with it, passing signals on and exiting with the child's code. With
 * no endpoint set nothing is exported and nothing is relaunched.
 *
 * The child must not end with Deno.exit. Deno 2.9 flushes and shuts its
 * exporter down inside Deno.exit, on the JavaScript thread, and the metric
 * reader's shutdown waits behind a collection round that is itself waiting
 * for the JavaScript thread to run the observable gauges' callbacks (Deno's
 * own v8js heap gauges are always observed). A round falls due during that
 * flush whenever the span and log export take longer than what is left of
 * OTEL_METRIC_EXPORT_INTERVAL (a busy collector, a short interval), and then
 * Deno.exit never returns: the process hangs for good after "shutting down"
 * (see denoland/deno#33157). Deno's own handling of SIGTERM and SIGINT does
 * the same flush on its signal thread while the JavaScript thread stays free
 * to answer, so the child ends a clean stop by raising the signal it was
 * stopped with, and the parent reads that end as exit code 0.
 */

import { V8_FLAGS_ARG } from "./v8_flags.ts";

/** In the relaunched child's environment: its parent reads its end by a signal it passed on as 0. */
const RELAUNCHED = "CRM_OTEL_RELAUNCHED";

const ENDPOINTS = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];

/** True when the operator asked for export and the runtime's exporter is not on yet. */
export function needsOtelRuntime(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_DENO !== undefined || env.OTEL_SDK_DISABLED === "true") return false;
  return ENDPOINTS.some((name) => (env[name] ?? "") !== "");
}

/**
 * The service name to export under: the operator's (OTEL_SERVICE_NAME, or
 * service.name in OTEL_RESOURCE_ATTRIBUTES) when given, else the process's
 * own (crm-gateway, ..., or crm for the whole system). Returns the settings
 * to add to the child's environment.
 */
export function serviceNameEnv(
  env: Record<string, string | undefined>,
  serviceName: string,
): Record<string, string> {
  if (env.OTEL_SERVICE_NAME) return {};
  const named = (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")
    .some((pair) => pair.split("=")[0].trim() === "service.name");
  return named ? {} : { OTEL_SERVICE_NAME: serviceName };
}

/**
 * The runtime's console capture: `replace` unless the operator chose, so that
 * console.* calls are exported as OTLP log records and not printed as well.
 * The structured logger then writes each line to stderr itself and exports it
 * (services/lib/log.ts); what a command prints on purpose goes to stdout
 * without console (run_process.ts, say).
 */
export function consoleEnv(env: Record<string, string | undefined>): Record<string, string> {
  return env.OTEL_DENO_CONSOLE ? {} : { OTEL_DENO_CONSOLE: "replace" };
}

/**
 * What the runtime must be told when the process serves the gateway and
 * TRACE_TRUST_PARENT is 0: not to read an incoming traceparent itself
 * (OTEL_PROPAGATORS=none), so its span of a request is sampled at the
 * gateway's own ratio (services/gateway/trace_parent.ts). Our own calls
 * carry their trace context whatever the runtime's propagators are.
 */
export function traceTrustEnv(
  env: Record<string, string | undefined>,
  servesGateway: boolean,
): Record<string, string> {
  return servesGateway && env.TRACE_TRUST_PARENT === "0" && !env.OTEL_PROPAGATORS
    ? { OTEL_PROPAGATORS: "none" }
    : {};
}

/**
 * Why the runtime's settings break TRACE_TRUST_PARENT=0 in a process that
 * serves the gateway, or undefined: the runtime's propagators, as it read
 * them at boot, still read traceparent (OTEL_DENO set by the operator, so
 * there was no relaunch to set them, or OTEL_PROPAGATORS naming it).
 */
export function traceTrustProblem(
  env: Record<string, string | undefined>,
  servesGateway: boolean,
): string | undefined {
  if (!servesGateway || env.TRACE_TRUST_PARENT !== "0" || env.OTEL_DENO !== "true") {
    return undefined;
  }
  // Deno's default is tracecontext and baggage.
  const propagators = (env.OTEL_PROPAGATORS ?? "tracecontext,baggage").split(",")
    .map((p) => p.trim());
  if (!propagators.includes("tracecontext")) return undefined;
  return "TRACE_TRUST_PARENT=0 needs the runtime not to read traceparent itself: set " +
    "OTEL_PROPAGATORS=none (or leave OTEL_DENO unset: the command then sets it)";
}

/** `deno run` arguments that start `mainModule` again with `args`, and the system's V8 flags. */
export function relaunchArgs(mainModule: string, args: readonly string[]): string[] {
  return ["run", V8_FLAGS_ARG, "-A", mainModule, ...args];
}

/**
 * Runs this command again with the exporter on, when export is wanted.
 * Resolves with the exit code to leave with, or undefined to go on here.
 */
export async function relaunchWithOtel(
  serviceName: string,
  servesGateway = false,
): Promise<number | undefined> {
  const env = Deno.env.toObject();
  if (!needsOtelRuntime(env)) return undefined;
  const child = new Deno.Command(Deno.execPath(), {
    args: relaunchArgs(Deno.mainModule, Deno.args),
    env: {
      OTEL_DENO: "true",
      [RELAUNCHED]: "1",
      ...consoleEnv(env),
      ...serviceNameEnv(env, serviceName),
      ...traceTrustEnv(env, servesGateway),
    },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT"];
  const passed = new Set<Deno.Signal>();
  const pass = signals.map((signal) => {
    const handler = () => {
      passed.add(signal);
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    };
    Deno.addSignalListener(signal, handler);
    return () => Deno.removeSignalListener(signal, handler);
  });
  const status = await child.status;
  pass.forEach((remove) => remove());
  // The child ends a clean stop on a signal by raising that signal again (endStopped).
  if (status.signal !== null && passed.has(status.signal)) return 0;
  return status.code;
}

/**
 * Ends the process after a clean stop on `signal`, its listeners removed:
 * with Deno.exit(0), except in the relaunched child, which raises `signal`
 * again so that Deno's signal thread, not the JavaScript thread, flushes the
 * exporter and ends it (see the top of this file).
 */
export function endStopped(signal: Deno.Signal): void {
  if (Deno.env.get(RELAUNCHED) !== "1") Deno.exit(0);
  // An event loop that ran dry would end the process on this thread after all.
  setInterval(() => {}, 60_000);
  Deno.kill(Deno.pid, signal);
}
