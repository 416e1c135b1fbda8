/**
 * Structured logging: one JSON object per line on stderr, so that stdout stays
 * free for what commands print on purpose (the admin JSON, the start banner).
 */
import type { LogLevel } from "./config.ts";
import { currentRequestId } from "./request_scope.ts";
import { traceIds, TRACING } from "./telemetry.ts";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /**
   * Whether lines of this level are written, so hot paths can skip building
   * them. Optional: a logger without it is taken to write every level.
   */
  enabled?(level: LogLevel): boolean;
}

export type LogSink = (line: string, level: LogLevel) => void;

/**
 * With export on and the runtime's console capture set to `replace`
 * (services/cli/otel_runtime.ts sets it), console.* calls become OTLP log
 * records and print nothing: each line then goes out both ways, on stderr
 * for `kubectl logs` and as a record of its level for the collector. The
 * runtime stamps the record with the active span's trace id, span id and
 * flags (the sampled bit), so a log line leads to its trace and back.
 */
const OTLP_LOGS = TRACING && Deno.env.get("OTEL_DENO_CONSOLE") === "replace";
const EXPORT: Record<LogLevel, (line: string) => void> = {
  debug: (line) => console.debug(line),
  info: (line) => console.info(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

const encoder = new TextEncoder();
const stderrSink: LogSink = (line, level) => {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
  if (OTLP_LOGS) EXPORT[level](line);
};

export function createLogger(
  level: LogLevel,
  base: LogFields = {},
  sink: LogSink = stderrSink,
): Logger {
  const threshold = ORDER[level];
  const write = (lvl: LogLevel, message: string, fields?: LogFields) => {
    if (ORDER[lvl] < threshold) return;
    const record: LogFields = { time: new Date().toISOString(), level: lvl, msg: message, ...base };
    // A line written while serving a request names it and its trace.
    const requestId = currentRequestId();
    if (requestId) record.requestId = requestId;
    const ids = traceIds();
    if (ids) {
      record.traceId = ids.traceId;
      record.spanId = ids.spanId;
      // Whether the trace was kept: at a sampling ratio under 1 most are not.
      record.sampled = ids.sampled;
    }
    if (fields) {
      for (const [k, v] of Object.entries(fields)) {
        record[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
      }
    }
    sink(JSON.stringify(record), lvl);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, sink),
    enabled: (lvl) => ORDER[lvl] >= threshold,
  };
}

/**
 * Masks the value of every query parameter that may carry a credential, so a
 * logged URL never reveals a key: `?key=pk_0123...` becomes `?key=***`.
 */
export function maskUrl(pathAndQuery: string): string {
  return pathAndQuery.replace(
    /([?&](?:key|token|secret|password|[a-z_]*_token)=)[^&#]*/gi,
    "$1***",
  );
}
