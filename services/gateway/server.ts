/**
 * The gateway's HTTP handler: the middleware chain around the dispatch of the
 * route table (routes/). Everything HTTP happens here and nothing else does.
 */
import type { Config } from "../lib/config.ts";
import type { Logger } from "../lib/log.ts";
import { compose, type RequestContext } from "./http.ts";
import { accessLog, errorBoundary, requestIdHeader, retryAfter, telemetry } from "./middleware.ts";
import { acceptRequestId, inRequest } from "../lib/request_scope.ts";
import { TRACING } from "../lib/telemetry.ts";
import { clientIp } from "../lib/ip.ts";
import { requestLimits } from "./limits.ts";
import { dispatcher } from "./routes/dispatch.ts";
import { requestTracing } from "./trace_parent.ts";
import { GATEWAY_AREAS, GATEWAY_ROUTES, type GatewayHandlers } from "./routes/mod.ts";

export interface GatewayHandlerOptions {
  config: Config;
  log: Logger;
  /** The handler of every route of the table (routes/mod.ts). */
  handlers: GatewayHandlers;
}

export type ServeHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Promise<Response>;

export function gatewayHandler(options: GatewayHandlerOptions): ServeHandler {
  const { config, log } = options;
  const dispatch = dispatcher(GATEWAY_ROUTES, options.handlers, GATEWAY_AREAS);
  // Whose sampled flag decides a request's trace (TRACE_TRUST_PARENT, trace_parent.ts).
  const traced = requestTracing(config.traceTrustParent);
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
    return traced(request, () => inRequest(ctx.requestId, () => Promise.resolve(chain(ctx))));
  };
}
