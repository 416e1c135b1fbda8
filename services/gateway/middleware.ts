/** The gateway's middlewares, in the order server.ts chains them. */
import type { Logger } from "../lib/log.ts";
import { maskUrl } from "../lib/log.ts";
import { jsonError, type Middleware } from "./http.ts";

/** Echoes the request id (taken from the caller or made here) on every answer. */
export const requestIdHeader: Middleware = async (ctx, next) => {
  const response = await next();
  response.headers.set("x-request-id", ctx.requestId);
  return response;
};

/**
 * One log line per request. The URL is masked, so the `key` query parameter
 * (a site key) never reaches a log.
 */
export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const response = await next();
    const failed = response.status >= 500;
    if (!failed && log.enabled?.("debug") === false) return response;
    const fields = {
      method: ctx.request.method,
      path: maskUrl(ctx.url.pathname + ctx.url.search),
      route: ctx.route,
      status: response.status,
      ms: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
      ip: ctx.ip,
      requestId: ctx.requestId,
    };
    if (failed) log.warn("request", fields);
    else log.debug("request", fields);
    return response;
  };
}

/** The last line of defence: an unexpected exception becomes a JSON 500, logged once. */
export function errorBoundary(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      return await next();
    } catch (error) {
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
