/** The gateway's middlewares, in the order server.ts chains them. */
import type { Logger } from "../lib/log.ts";
import { maskUrl } from "../lib/log.ts";
import { truncateIp } from "../lib/ip.ts";
import { jsonError, type Middleware } from "./http.ts";
import {
  activeSpan,
  annotateSite,
  meter,
  recordFailure,
  SpanStatusCode,
} from "../lib/telemetry.ts";

const requestDuration = meter.createHistogram("http.server.request.duration", {
  description: "Duration of HTTP requests the gateway served",
  unit: "s",
  advice: {
    explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  },
});
const rateLimited = meter.createCounter("crm.gateway.rate_limited", {
  description: "Requests the gateway refused with 429 rate_limit_exceeded, per route",
  unit: "{request}",
});

/**
 * Names the runtime's server span by route (`GET /content/v1/pages/:marker`)
 * once the route is known, and records the request's duration per route and
 * status. Runs outermost, so it sees the answer the caller gets.
 */
export const telemetry: Middleware = async (ctx, next) => {
  const response = await next();
  const method = ctx.request.method;
  const route = ctx.route;
  const status = response.status;
  const span = activeSpan();
  if (span) {
    span.updateName(route ? `${method} ${route}` : method);
    if (route) span.setAttribute("http.route", route);
    annotateSite(ctx.siteId, span);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  const attributes = {
    "http.request.method": method,
    "http.response.status_code": status,
    ...(route ? { "http.route": route } : {}),
  };
  requestDuration.record((performance.now() - ctx.startedAt) / 1000, attributes);
  if (status === 429) rateLimited.add(1, { "http.route": route ?? "" });
  return response;
};

/**
 * Echoes the request id (taken from the caller or made here) on every answer;
 * an answer made with it already (withRequestId) is left as it is.
 */
export const requestIdHeader: Middleware = async (ctx, next) => {
  const response = await next();
  if (!ctx.requestIdSent) response.headers.set("x-request-id", ctx.requestId);
  return response;
};

/** A request that takes longer is logged at warn whatever its answer. */
export const SLOW_REQUEST_MS = 1000;

/**
 * One log line per request: at debug, and at warn for a 5xx and for a
 * request slower than SLOW_REQUEST_MS, so that failures and slow requests
 * are never invisible when their trace was not sampled (the line carries
 * the trace id either way). The URL is masked, so the `key` query parameter
 * (a site key) never reaches a log, and the client address is truncated as
 * it is for storage (IPv4 to its /24, IPv6 to its /48): a full address is
 * personal data that logs, kept and shipped elsewhere, must not hold.
 */
export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const response = await next();
    const ms = performance.now() - ctx.startedAt;
    // A refusal for load is the bound doing its job, counted by crm.gateway.refused.
    const failed = response.status >= 500 && ctx.refused === undefined;
    const slow = ms > SLOW_REQUEST_MS;
    if (!failed && !slow && log.enabled?.("debug") === false) return response;
    const fields = {
      method: ctx.request.method,
      path: maskUrl(ctx.url.pathname + ctx.url.search),
      route: ctx.route,
      status: response.status,
      ms: Math.round(ms * 10) / 10,
      ip: truncateIp(ctx.ip),
      requestId: ctx.requestId,
      ...(slow ? { slow: true } : {}),
    };
    if (failed || slow) log.warn("request", fields);
    else log.debug("request", fields);
    return response;
  };
}

/**
 * Every 503 (a service away, overload) tells clients when to try again, so
 * retries spread out instead of hammering a recovering service.
 */
export const retryAfter: Middleware = async (_ctx, next) => {
  const response = await next();
  if (response.status === 503 && !response.headers.has("retry-after")) {
    response.headers.set("retry-after", "1");
  }
  return response;
};

/** The last line of defence: an unexpected exception becomes a JSON 500, logged once. */
export function errorBoundary(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      return await next();
    } catch (error) {
      recordFailure(activeSpan(), error);
      log.error("unhandled gateway error", {
        requestId: ctx.requestId,
        path: maskUrl(ctx.url.pathname),
        error,
        stack: (error as Error)?.stack,
      });
      return jsonError(500, { message: "internal_error" });
    }
  };
}
