/**
 * OpenTelemetry export. Deno's runtime carries an OTLP exporter (traces of
 * Deno.serve and fetch, console logs, metrics, and spans made through
 * `@opentelemetry/api`), but it starts only when `OTEL_DENO=true` is in the
 * environment as the runtime boots. Operators set the standard settings
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, ...), so when one of
 * the endpoints is set and `OTEL_DENO` is not, the command runs itself once
 * more with it, passing signals on and exiting with the child's code. With
 * no endpoint set nothing is exported and nothing is relaunched.
 */

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
 * Runs this command again with the exporter on, when export is wanted.
 * Resolves with the exit code to leave with, or undefined to go on here.
 */
export async function relaunchWithOtel(serviceName: string): Promise<number | undefined> {
  const env = Deno.env.toObject();
  if (!needsOtelRuntime(env)) return undefined;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", Deno.mainModule, ...Deno.args],
    env: { OTEL_DENO: "true", ...serviceNameEnv(env, serviceName) },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT"];
  const pass = signals.map((signal) => {
    const handler = () => {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    };
    Deno.addSignalListener(signal, handler);
    return () => Deno.removeSignalListener(signal, handler);
  });
  const status = await child.status;
  pass.forEach((remove) => remove());
  return status.code;
}
