/**
 * A real Jaeger v2 (built by .ci/tools.sh) for the telemetry tests: traces in
 * memory, OTLP/HTTP in, the query API out, on ports the test chooses.
 */
import { tool } from "./tools.ts";
import { keepTail } from "./process.ts";

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  processID: string;
  references: { refType: "CHILD_OF" | "FOLLOWS_FROM"; traceID: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  logs: { fields: { key: string; value: unknown }[] }[];
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

export interface Jaeger {
  /** Where services send OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string;
  /** The query API and UI. */
  queryUrl: string;
  /**
   * The trace with this id once `ready` holds for it (polls), then read once
   * more after settleMs, as each process exports on its own schedule.
   */
  trace(
    traceId: string,
    ready: (trace: JaegerTrace) => boolean,
    settleMs?: number,
  ): Promise<JaegerTrace>;
  /** Traces of a service, newest first. */
  traces(service: string, operation?: string): Promise<JaegerTrace[]>;
  stop(): Promise<void>;
}

export const JAEGER = tool("jaeger");

export interface JaegerPorts {
  otlpHttp: number;
  otlpGrpc: number;
  query: number;
  queryGrpc: number;
  health: number;
}

function config(ports: JaegerPorts): string {
  return `
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: []
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${ports.health}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.otlpGrpc}
      http:
        endpoint: 127.0.0.1:${ports.otlpHttp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startJaeger(ports: JaegerPorts): Promise<Jaeger> {
  if (!JAEGER) throw new Error("jaeger is not installed: run .ci/tools.sh");
  const dir = await Deno.makeTempDir({ prefix: "crm-jaeger-" });
  const file = `${dir}/config.yaml`;
  await Deno.writeTextFile(file, config(ports));
  const child = new Deno.Command(JAEGER, {
    args: ["--config", file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = keepTail(child.stderr, 4000);
  const queryUrl = `http://127.0.0.1:${ports.query}`;
  try {
    await waitFor(async () => {
      const answer = await fetch(`${queryUrl}/api/services`);
      await answer.body?.cancel();
      return answer.ok;
    }, "jaeger's query API");
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}\n${stderr()}`);
  }

  const getJson = async (path: string) => {
    const answer = await fetch(`${queryUrl}${path}`);
    if (answer.status === 404) {
      await answer.body?.cancel();
      return undefined;
    }
    if (!answer.ok) throw new Error(`jaeger ${path}: ${answer.status} ${await answer.text()}`);
    return (await answer.json()).data;
  };

  return {
    otlpEndpoint: `http://127.0.0.1:${ports.otlpHttp}`,
    queryUrl,
    async trace(traceId, ready, settleMs = 1000) {
      let found: JaegerTrace | undefined;
      await waitFor(async () => {
        found = (await getJson(`/api/traces/${traceId}`))?.[0];
        return found !== undefined && ready(found);
      }, `trace ${traceId} (has ${found?.spans.map((s) => s.operationName).join(", ")})`);
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      return (await getJson(`/api/traces/${traceId}`))[0];
    },
    async traces(service, operation) {
      const query = new URLSearchParams({ service, limit: "100", lookback: "1h" });
      if (operation) query.set("operation", operation);
      return (await getJson(`/api/traces?${query}`)) ?? [];
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A fresh sampled W3C traceparent, and its trace and span ids. */
export function newTraceparent(): { header: string; traceId: string; spanId: string } {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const spanId = hex(8);
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** A tag's value on a span. */
export function tag(span: JaegerSpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}

/** The service a span was exported by. */
export function serviceOf(trace: JaegerTrace, span: JaegerSpan): string {
  return trace.processes[span.processID]?.serviceName ?? "";
}

/** The span's parent in the same trace, if any. */
export function parentOf(trace: JaegerTrace, span: JaegerSpan): JaegerSpan | undefined {
  const ref = span.references.find((r) => r.refType === "CHILD_OF" && r.traceID === trace.traceID);
  return ref && trace.spans.find((s) => s.spanID === ref.spanID);
}
