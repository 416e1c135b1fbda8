/**
 * A stand-in OpenTelemetry collector for tests: it takes OTLP/HTTP in JSON
 * (the exporter runs with OTEL_EXPORTER_OTLP_PROTOCOL=http/json) on
 * /v1/traces, /v1/metrics and /v1/logs, keeps every request's body as
 * parsed, and answers 200.
 */

// deno-lint-ignore no-explicit-any
export type OtlpJson = any;

export interface OtlpReceiver {
  url: string;
  /** Every body received on the path (`/v1/metrics`, ...), in order of arrival. */
  received(path: string): OtlpJson[];
  close(): Promise<void>;
}

export function startOtlpReceiver(): OtlpReceiver {
  const bodies = new Map<string, OtlpJson[]>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const text = await req.text();
    try {
      const list = bodies.get(path) ?? [];
      list.push(JSON.parse(text));
      bodies.set(path, list);
    } catch {
      return new Response("expected OTLP/JSON", { status: 400 });
    }
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received: (path) => bodies.get(path) ?? [],
    close: () => server.shutdown(),
  };
}

/** An OTLP attribute list as a plain object of strings. */
export function attributesOf(list: OtlpJson[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
    out[key] = String(v);
  }
  return out;
}

export interface LogRecord {
  resource: Record<string, string>;
  severityText: string;
  body: string;
  traceId: string;
  spanId: string;
  flags: number;
}

/** Every log record received, flattened. */
export function logRecords(receiver: OtlpReceiver): LogRecord[] {
  return receiver.received("/v1/logs").flatMap((body) =>
    (body.resourceLogs ?? []).flatMap((rl: OtlpJson) => {
      const resource = attributesOf(rl.resource?.attributes);
      return (rl.scopeLogs ?? []).flatMap((sl: OtlpJson) =>
        (sl.logRecords ?? []).map((r: OtlpJson) => ({
          resource,
          severityText: r.severityText ?? "",
          body: String(r.body?.stringValue ?? ""),
          traceId: r.traceId ?? "",
          spanId: r.spanId ?? "",
          flags: Number(r.flags ?? 0),
        }))
      );
    })
  );
}
