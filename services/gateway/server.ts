/**
 * The gateway's HTTP handler: the middleware chain around a dispatch by path
 * prefix. Everything HTTP happens here and nothing else does.
 */
import type { Config } from "../lib/config.ts";
import type { Logger } from "../lib/log.ts";
import { compose, type Handler, jsonError, type RequestContext } from "./http.ts";
import { accessLog, errorBoundary, requestIdHeader, retryAfter, telemetry } from "./middleware.ts";
import { acceptRequestId, inRequest } from "../lib/request_scope.ts";
import { TRACING } from "../lib/telemetry.ts";
import { clientIp } from "../lib/ip.ts";
import { type BackendStates, healthz, livez } from "./health.ts";
import { requestLimits } from "./limits.ts";
import { OPENAPI_PATH, openApiHandler } from "./openapi/serve.ts";

export interface GatewayRoutes {
  /** Every request under /content/. */
  content: Handler;
  /** GET /widget.js. */
  widget: Handler;
  /** The demo site's page under /demo/ (deno task start only). */
  demo?: Handler;
  /** Every request under /marketing/. */
  marketing: Handler;
  /** Every request under /stats/. */
  stats: Handler;
  /** The reports page under /dashboard/. */
  dashboard: Handler;
}

export interface GatewayHandlerOptions {
  config: Config;
  log: Logger;
  routes: GatewayRoutes;
  /** The backends' states, kept current in the background (health.ts). */
  health: BackendStates;
}

export type ServeHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Promise<Response>;

export function gatewayHandler(options: GatewayHandlerOptions): ServeHandler {
  const { config, log, routes, health } = options;
  const openApi = openApiHandler();
  const dispatch: Handler = (ctx) => {
    const path = ctx.url.pathname;
    if (path.startsWith("/content/") || path === "/content") return routes.content(ctx);
    if (path === "/widget.js") return routes.widget(ctx);
    if (routes.demo && (path === "/demo" || path.startsWith("/demo/"))) return routes.demo(ctx);
    if (path.startsWith("/marketing/")) return routes.marketing(ctx);
    if (path.startsWith("/stats/")) return routes.stats(ctx);
    if (path === "/dashboard" || path.startsWith("/dashboard/")) return routes.dashboard(ctx);
    if (path === "/livez") return livez();
    if (path === "/healthz") return healthz(health);
    if (path === OPENAPI_PATH) return openApi(ctx);
    return jsonError(404, {
      message: `Cannot ${ctx.request.method} ${path}`,
      error: "Not Found",
      statusCode: 404,
    });
  };
  const chain = compose(
    [
      // Spans and metrics exist only when the runtime exports them (TRACING).
      ...(TRACING ? [telemetry] : []),
      errorBoundary(log),
      accessLog(log),
      requestIdHeader,
      retryAfter,
      requestLimits(config.http),
    ],
    dispatch,
  );
  return (request, info) => {
    // Read once: each read of remoteAddr asks the runtime again and makes a new object.
    const peer = info.remoteAddr;
    const ctx: RequestContext = {
      request,
      url: new URL(request.url),
      ip: clientIp(peer.hostname, request.headers.get("x-forwarded-for"), config.trustProxy),
      requestId: acceptRequestId(request.headers.get("x-request-id")),
      connection: `${peer.hostname}:${peer.port}`,
      startedAt: performance.now(),
    };
    return inRequest(ctx.requestId, () => Promise.resolve(chain(ctx)));
  };
}
