/**
 * The one interceptor list every service's handlers pass through, and the one
 * every client call passes through. Cross-cutting work (request ids, logging,
 * the admin token, later tracing) is added here and nowhere else.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log.ts";
import { storageUnavailable } from "../db/mod.ts";
import { ReportTimeoutError } from "../db/report_reads.ts";
import { publicError } from "../errors.ts";
import { acceptRequestId, currentRequestId, inRequest } from "../request_scope.ts";
import {
  annotateSite,
  extractFromHeaders,
  injectIntoHeaders,
  meter,
  type Span,
  SpanKind,
  spanWork,
  tracer,
  TRACING,
  unsampled,
} from "../telemetry.ts";

export const REQUEST_ID_HEADER = "x-request-id";

/** The request id of the call being handled; set by requestIdInterceptor. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/** Takes the caller's request id (or makes one) and serves the call inside its scope. */
function requestIdInterceptor(): Interceptor {
  return (next) => (request) => {
    const id = acceptRequestId(request.header.get(REQUEST_ID_HEADER));
    request.contextValues.set(requestIdKey, id);
    return inRequest(id, () => next(request));
  };
}

/** Seconds, as every duration the system exports (the semantic conventions' unit). */
const rpcDuration = meter.createHistogram("rpc.server.call.duration", {
  description: "Duration of RPCs a service served",
  unit: "s",
  advice: {
    explicitBucketBoundaries: [
      0.00025,
      0.0005,
      0.001,
      0.0025,
      0.005,
      0.01,
      0.025,
      0.05,
      0.1,
      0.25,
      0.5,
      1,
      2.5,
      5,
    ],
  },
});

/** The rpc.* attributes of a call, on its spans and its duration. */
function rpcAttributes(request: { service: { typeName: string }; method: { name: string } }) {
  return {
    "rpc.system": "connect_rpc",
    "rpc.service": request.service.typeName,
    "rpc.method": request.method.name,
  };
}

/**
 * What an RPC span records of an error: its Connect code always, a failure
 * only for server faults (a refused input is the service doing its job).
 */
function rpcFailure(span: Span): (error: unknown) => boolean {
  return (error) => {
    if (error instanceof ConnectError) {
      span.setAttribute("rpc.connect_rpc.error_code", Code[error.code]);
    }
    return isServerFault(error);
  };
}

/** Whether an error is the server's fault rather than a refusal of the caller's input. */
function isServerFault(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return true;
  return [Code.Internal, Code.Unknown, Code.Unavailable, Code.DataLoss, Code.DeadlineExceeded]
    .includes(error.code);
}

/**
 * The callee's SERVER span, named by the RPC
 * (`crm.content.v1.ContentService/GetPage`), under the caller's span from
 * the traceparent header, with the rpc.* attributes and the site id the
 * message names. Only server faults mark the span failed: a refusal (a bad
 * key, an invalid item) is the service doing its job.
 */
function serverTelemetryInterceptor(): Interceptor {
  return (next) => async (request) => {
    const attributes = rpcAttributes(request);
    const started = performance.now();
    let code = "OK";
    try {
      if (!TRACING) return await next(request);
      const parent = extractFromHeaders(request.header);
      // An unsampled caller: no span of ours (the runtime's drops it anyway).
      if (unsampled(parent)) return await next(request);
      return await tracer.startActiveSpan(
        `${attributes["rpc.service"]}/${attributes["rpc.method"]}`,
        { kind: SpanKind.SERVER, attributes },
        parent,
        (span) => {
          const message = request.stream ? undefined : request.message as { siteId?: unknown };
          if (typeof message?.siteId === "string") annotateSite(message.siteId, span);
          return spanWork(span, () => next(request), rpcFailure(span));
        },
      );
    } catch (error) {
      code = error instanceof ConnectError ? Code[error.code] : "Unknown";
      throw error;
    } finally {
      rpcDuration.record((performance.now() - started) / 1000, {
        ...attributes,
        "rpc.connect_rpc.error_code": code,
      });
    }
  };
}

/**
 * Logs failed calls, and turns an unexpected exception into a plain INTERNAL
 * error so no stack or SQL text reaches a caller.
 */
function loggingInterceptor(log: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    try {
      return await next(request);
    } catch (error) {
      const fields = {
        rpc: `${request.service.typeName}/${request.method.name}`,
        requestId: request.contextValues.get(requestIdKey),
        ms: Math.round(performance.now() - started),
      };
      if (
        error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown
      ) {
        log.debug("rpc refused", { ...fields, code: Code[error.code], reason: error.rawMessage });
        throw error;
      }
      if (error instanceof ReportTimeoutError) {
        // Cancelled in Postgres at REPORT_TIMEOUT_MS; the gateway answers 504 timeout.
        log.warn("rpc failed: report timeout", { ...fields, timeoutMs: error.timeoutMs });
        throw publicError(Code.DeadlineExceeded, "timeout");
      }
      if (storageUnavailable(error)) {
        // Postgres restarting or away: the caller may retry, and the gateway
        // answers 503 service_unavailable, not an internal error.
        log.warn("rpc failed: storage unavailable", { ...fields, error: String(error) });
        throw new ConnectError("storage unavailable", Code.Unavailable);
      }
      log.error("rpc failed", { ...fields, error, stack: (error as Error)?.stack });
      if (error instanceof ConnectError) throw error;
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

/** Compares in time independent of where the strings first differ. */
function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * The operator's services, which need the bearer token when ADMIN_TOKEN is
 * set: every service named *AdminService, in any package (the shared
 * crm.admin.v1.SiteAdminService and each service's own, e.g.
 * crm.ingest.v1.IngestAdminService). A service the gateway calls must not be
 * named so.
 */
export function isAdminService(typeName: string): boolean {
  return typeName.endsWith("AdminService");
}

/**
 * Admin calls must carry one of the accepted tokens: ADMIN_TOKEN, and during a
 * rotation ADMIN_TOKEN_NEXT too. Each is compared in constant time, and both
 * always are, so the answer's timing tells nothing of which one matched.
 */
function adminTokenInterceptor(tokens: string[]): Interceptor {
  return (next) => (request) => {
    if (tokens.length > 0 && isAdminService(request.service.typeName)) {
      const header = request.header.get("authorization") ?? "";
      const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
      const matches = tokens.map((token) => constantTimeEqual(presented, token));
      if (!matches.includes(true)) {
        throw new ConnectError("admin token missing or wrong", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}

export interface ServerInterceptorOptions {
  log: Logger;
  /** ADMIN_TOKEN: when set, every admin call must carry it (or adminTokenNext). */
  adminToken?: string;
  /** ADMIN_TOKEN_NEXT: a second accepted token while the token is rotated. */
  adminTokenNext?: string;
}

export function serverInterceptors(options: ServerInterceptorOptions): Interceptor[] {
  const tokens = [options.adminToken, options.adminTokenNext].filter((t): t is string => !!t);
  return [
    serverTelemetryInterceptor(),
    requestIdInterceptor(),
    loggingInterceptor(options.log),
    adminTokenInterceptor(tokens),
  ];
}

export interface ClientInterceptorOptions {
  adminToken?: string;
}

/**
 * The caller's side of every internal call: the request id of the request
 * being served travels on, and with tracing on the call is a CLIENT span whose
 * traceparent the callee joins.
 */
function clientRequestInterceptor(): Interceptor {
  return (next) => async (request) => {
    const requestId = currentRequestId();
    if (requestId) request.header.set(REQUEST_ID_HEADER, requestId);
    if (!TRACING) return await next(request);
    if (unsampled()) {
      // The callee learns the trace is not sampled and skips its spans too.
      injectIntoHeaders(request.header);
      return await next(request);
    }
    const attributes = rpcAttributes(request);
    const url = URL.parse(request.url);
    return await tracer.startActiveSpan(
      `${attributes["rpc.service"]}/${attributes["rpc.method"]}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...attributes,
          ...(url ? { "server.address": url.hostname, "server.port": Number(url.port) } : {}),
        },
      },
      (span) => {
        injectIntoHeaders(request.header);
        return spanWork(span, () => next(request), rpcFailure(span));
      },
    );
  };
}

/** Client side: the request id and trace context, and the admin token on admin calls. */
export function clientInterceptors(options: ClientInterceptorOptions): Interceptor[] {
  const list: Interceptor[] = [clientRequestInterceptor()];
  if (options.adminToken) {
    const token = options.adminToken;
    list.push((next) => (request) => {
      if (isAdminService(request.service.typeName)) {
        request.header.set("authorization", `Bearer ${token}`);
      }
      return next(request);
    });
  }
  return list;
}
