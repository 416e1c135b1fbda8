import type { MatchedRoute } from "./routes/dispatch.ts";

/**
 * The gateway's request model: one context object per request, handlers, and
 * the one middleware chain every request passes through. Cross-cutting work
 * (request ids, access logs, error bodies, later tracing) is a middleware.
 */

export interface RequestContext {
  request: Request;
  url: URL;
  /** Client IP after TRUST_PROXY is applied. */
  ip: string;
  requestId: string;
  /** The client connection (socket address and port), for per-connection bounds. */
  connection: string;
  /** Route pattern, once a route matched; for logs and traces. */
  route?: string;
  /** The route table's entry the request matched, its parameters and CORS headers. */
  match?: MatchedRoute;
  /**
   * Set when a bound refused the request at once (limits.ts): the access log
   * keeps such answers at debug, so a flood of refusals is not a flood of warnings.
   */
  refused?: string;
  /** The site the request was authenticated for, once known; for traces. */
  siteId?: string;
  /**
   * Set by a handler whose answer was made with `x-request-id` among its
   * headers (withRequestId): requestIdHeader then leaves the answer as made.
   * Changing a Response's headers after it is made costs Deno the native
   * response it prepared in the constructor (built again from the header
   * list when the answer is sent, a second copy of the body).
   */
  requestIdSent?: boolean;
  startedAt: number;
}

export type Handler = (ctx: RequestContext) => Promise<Response> | Response;
export type Middleware = (ctx: RequestContext, next: () => Promise<Response>) => Promise<Response>;

/**
 * The headers of an answer with the request's `x-request-id` among them, for
 * a hot path that makes its Response once and never changes it afterwards.
 */
export function withRequestId(
  ctx: RequestContext,
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  ctx.requestIdSent = true;
  return { ...headers, "x-request-id": ctx.requestId };
}

/** Wraps a handler in middlewares; the first in the list runs outermost. */
export function compose(middlewares: readonly Middleware[], handler: Handler): Handler {
  return middlewares.reduceRight<Handler>(
    // Promise.resolve, not an async wrapper: one promise and tick fewer per layer.
    (next, middleware) => (ctx) => middleware(ctx, () => Promise.resolve(next(ctx))),
    handler,
  );
}

/**
 * JSON is UTF-8 by definition (RFC 8259) and its media type has no charset
 * parameter, so the type is sent exactly as the specification names it.
 */
export const JSON_TYPE = "application/json";

/** A JSON response; bodies given as bytes are sent as they are. */
export function json(status: number, body: unknown, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("content-type", JSON_TYPE);
  const payload = body instanceof Uint8Array ? body : JSON.stringify(body);
  return new Response(payload as BodyInit, { status, headers: h });
}

/** Every error body: JSON with a message, never cached. */
export function jsonError(
  status: number,
  body: { message: string; [field: string]: unknown },
  headers: HeadersInit = {},
): Response {
  const h = new Headers(headers);
  h.set("cache-control", "no-store");
  return json(status, body, h);
}
