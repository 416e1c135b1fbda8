/**
 * TRACE_TRUST_PARENT=0: the gateway keeps an incoming traceparent's trace id
 * but not its sampled flag, so no caller can make a trace be kept.
 *
 * Deno's runtime makes the server span of every request before the gateway
 * runs, and when it reads an incoming traceparent itself a parent-based
 * sampler follows the caller's flag; a sampler that decides from the trace
 * id alone (traceidratio) follows the caller as well, since the caller picks
 * the id. So a gateway that does not trust its callers runs with the
 * runtime's propagators off (OTEL_PROPAGATORS=none, set by the command,
 * otel_runtime.ts): the runtime's span of each request is then a new trace
 * of its own, sampled at the gateway's ratio from a random trace id, a
 * decision no caller can sway. Without a traceparent that span is the
 * request's server span, as ever. With one, the request is traced in the
 * caller's trace under the runtime's decision: unsampled, the request runs
 * under the caller's trace id marked unsampled (its log lines carry that id,
 * and the services it calls keep nothing); sampled, the gateway makes the
 * server span itself, in the caller's trace, linked to the runtime's span,
 * which the runtime then exports as a trace of one span of its own.
 */
import { context, isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { extractFromHeaders, SpanKind, spanWork, tracer, TRACING } from "../lib/telemetry.ts";

/** Runs a request's handling; the wrapper decides in which trace. */
export type TracedRequest = (
  request: Request,
  handle: () => Promise<Response>,
) => Promise<Response>;

/** The name the runtime's own span keeps when the gateway traced the request in the caller's trace. */
export const UNTRUSTED_PARENT_SPAN = "traceparent not trusted";

const asIs: TracedRequest = (_request, handle) => handle();

/** How the gateway traces a request: as the runtime does, or (untrusting) as above. */
export function requestTracing(trustParent: boolean): TracedRequest {
  if (!TRACING || trustParent) return asIs;
  return (request, handle) => {
    if (!request.headers.has("traceparent")) return handle();
    const incoming = trace.getSpanContext(extractFromHeaders(request.headers, ROOT_CONTEXT));
    if (!incoming || !isSpanContextValid(incoming)) return handle();
    // The runtime's span: a root of its own, sampled at the gateway's ratio.
    const own = trace.getActiveSpan();
    const sampled = own !== undefined &&
      (own.spanContext().traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: incoming.traceId,
      spanId: incoming.spanId,
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    });
    if (!sampled) return context.with(parent, handle);
    own!.updateName(`${request.method} (${UNTRUSTED_PARENT_SPAN})`);
    const url = new URL(request.url);
    return tracer.startActiveSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          "url.scheme": url.protocol.slice(0, -1),
          "url.path": url.pathname,
        },
        links: [{ context: own!.spanContext() }],
      },
      parent,
      (span) =>
        spanWork(span, async () => {
          const response = await handle();
          span.setAttribute("http.response.status_code", response.status);
          return response;
        }),
    );
  };
}
