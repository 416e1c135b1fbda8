/**
 * Tracing and metrics through @opentelemetry/api. Deno's runtime registers
 * its own tracer and meter providers and exports them over OTLP when it
 * starts with OTEL_DENO=true (see services/cli/otel_runtime.ts); without it
 * the API hands out no-op tracers, and every helper here returns before doing
 * any work, so tracing off costs a boolean test per call site.
 *
 * Attribute rule for every span made here: the site id may be recorded, a
 * key, an IP address or a visitor id never.
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  metrics,
  type ObservableResult,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { outsideRequest } from "./request_scope.ts";

/** Whether the runtime exports telemetry; read once, as the runtime reads it once. */
export const TRACING = Deno.env.get("OTEL_DENO") === "true";

export const tracer = trace.getTracer("crm");
export const meter = metrics.getMeter("crm");

/** The attribute naming the site a span or metric point belongs to. */
export const SITE_ID = "crm.site.id";

export { SpanKind, SpanStatusCode };
export type { Attributes, Link, ObservableResult, Span };

/**
 * The span of the work being done now, if it is sampled. Deno's runtime
 * reports every span as recording and drops the unsampled ones when it
 * exports them, so the sampled flag is what says whether a child span, an
 * attribute or an event would ever be seen: work for an unsampled trace is
 * skipped here, which is what makes a low sampling ratio cheap.
 */
export function activeSpan(): Span | undefined {
  if (!TRACING) return undefined;
  const span = trace.getActiveSpan();
  return span && sampled(span) ? span : undefined;
}

function sampled(span: Span): boolean {
  return (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** Whether the context names a trace that is not sampled (false when it names none). */
export function unsampled(from: Context = context.active()): boolean {
  const parent = trace.getSpanContext(from);
  return parent !== undefined && (parent.traceFlags & TraceFlags.SAMPLED) === 0;
}

/**
 * Runs fn under an unsampled parent, so that with a parent-based sampler
 * neither our spans nor the runtime's fetch spans make traces of it:
 * background chatter (the gateway's health polls) that would otherwise be a
 * root trace every few seconds.
 */
export function untraced<T>(fn: () => T): T {
  if (!TRACING) return fn();
  const parent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: randomHex(16),
    spanId: randomHex(8),
    traceFlags: TraceFlags.NONE,
  });
  return context.with(parent, fn);
}

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** Names the site on the active span (the gateway's server span, an RPC's). */
export function annotateSite(siteId: string | undefined, span = activeSpan()): void {
  if (span && siteId) span.setAttribute(SITE_ID, siteId);
}

/** Marks a span failed: ERROR status and an exception event. */
export function recordFailure(span: Span | undefined, error: unknown): void {
  if (!span) return;
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
}

/**
 * Runs fn as the span's work: the span ends when fn settles and is marked
 * failed when fn throws and `failed` says the error is a failure (every
 * error unless told otherwise).
 */
export async function spanWork<T>(
  span: Span,
  fn: () => Promise<T>,
  failed: (error: unknown) => boolean = () => true,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (failed(error)) recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs fn in a child span of the active one, ending it when fn settles. With
 * tracing off, or with no request span to hang it under, fn just runs: a span
 * without a parent would be an orphan trace of one statement.
 */
export function inSpan<T>(
  { name, kind, attributes }: { name: string; kind: SpanKind; attributes: Attributes },
  fn: () => Promise<T>,
): Promise<T> {
  if (!activeSpan()) return fn();
  return tracer.startActiveSpan(name, { kind, attributes }, (span) => spanWork(span, fn));
}

export interface SharedWorkSpan {
  name: string;
  /** The spans of the requests served, where they are sampled. */
  links: readonly (Link | undefined)[];
  attributes: Attributes;
}

/** A link to the span of the request being served, for work that serves many. */
export function currentLink(): Link | undefined {
  const span = activeSpan();
  return span && { context: span.spanContext() };
}

/**
 * Work shared by many requests (one batch, one group commit): a root span of
 * its own trace that links to every request's span, run outside any request
 * scope so neither its logs nor its own spans claim one request.
 */
export function sharedWork<T>(
  { name, links, attributes }: SharedWorkSpan,
  fn: () => Promise<T>,
): Promise<T> {
  if (!TRACING) return fn();
  const present = links.filter((link): link is Link => link !== undefined);
  return detached(() =>
    tracer.startActiveSpan(
      name,
      { kind: SpanKind.INTERNAL, links: present, attributes, root: true },
      (span) => spanWork(span, fn),
    )
  );
}

/**
 * Runs fn outside any request and trace (background work started from
 * within one, such as a worker told of new work by an RPC handler), so its
 * logs and spans claim no request.
 */
export function detached<T>(fn: () => T): T {
  return outsideRequest(() => context.with(ROOT_CONTEXT, fn));
}

/**
 * The W3C trace context (traceparent, tracestate) our own calls carry, read
 * and written by this code whatever the runtime's OTEL_PROPAGATORS say: a
 * gateway that must not trust its callers runs with the runtime's
 * propagators off (so the runtime does not join an incoming traceparent
 * itself, trace_parent.ts), and the internal calls keep their context all
 * the same.
 */
const traceContext = new W3CTraceContextPropagator();

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => {
    const value = carrier.get(key) ?? undefined;
    // Deno's fetch adds its own traceparent to one a caller already set,
    // which joins them with a comma; the first one is the caller's.
    return key === "traceparent" && value ? value.split(",")[0].trim() : value;
  },
};

/** The context an incoming request's trace headers name, under the active one. */
export function extractFromHeaders(headers: Headers, parent: Context = context.active()): Context {
  return traceContext.extract(parent, headers, headerGetter);
}

/** Writes the active span's trace headers for an outgoing call. */
export function injectIntoHeaders(headers: Headers, from: Context = context.active()): void {
  traceContext.inject(from, headers, { set: (carrier, key, value) => carrier.set(key, value) });
}

/**
 * The trace and span id of the active span, for log lines, and whether the
 * trace is sampled (exported): an unsampled trace's id still finds the
 * request's other log lines, but no trace.
 */
export function traceIds(): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (!TRACING) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId, sampled: sampled(span) };
}

/** The objects a gauge over instances reads, and how it combines their values. */
export interface InstanceGauge<T extends object> {
  /** Counts the object from now on (held weakly: a dropped one stops counting). */
  add(instance: T): void;
  /** Stops counting it. */
  remove(instance: T): void;
}

/**
 * A gauge whose value comes from the live objects of one kind in this
 * process (one per service, more in tests): each gives its value or none,
 * and the gauge reports the lowest or the highest, nothing when none has one.
 * With `attributes`, one point for each distinct set of them (an outbox, a
 * service), picked among the objects that give that set.
 */
export function gaugeOverInstances<T extends object>(
  name: string,
  options: {
    description: string;
    unit: string;
    value: (instance: T) => number | undefined;
    pick: "lowest" | "highest";
    attributes?: (instance: T) => Attributes;
  },
): InstanceGauge<T> {
  const refs = new Set<WeakRef<T>>();
  const better = options.pick === "lowest" ? Math.min : Math.max;
  meter.createObservableGauge(name, { description: options.description, unit: options.unit })
    .addCallback((result) => {
      const picked = new Map<string, { value: number; attributes?: Attributes }>();
      for (const ref of refs) {
        const instance = ref.deref();
        if (!instance) {
          refs.delete(ref);
          continue;
        }
        const value = options.value(instance);
        if (value === undefined) continue;
        const attributes = options.attributes?.(instance);
        const key = attributes ? JSON.stringify(attributes) : "";
        const seen = picked.get(key);
        picked.set(key, { value: seen ? better(seen.value, value) : value, attributes });
      }
      for (const { value, attributes } of picked.values()) result.observe(value, attributes);
    });
  return {
    add: (instance) => void refs.add(new WeakRef(instance)),
    remove(instance) {
      for (const ref of refs) if (ref.deref() === instance) refs.delete(ref);
    },
  };
}

/**
 * `crm.up`: 1 for each service a process runs (`crm.service`: gateway,
 * auth, content, ingest), exported at every metric interval whatever the
 * traffic. It is the series whose absence the missing-data alerts look for:
 * metrics are pushed, so a stopped process, a hung event loop (the runtime
 * observes gauges on it) or a stopped collector all look the same in
 * Prometheus: no new sample.
 */
const servicesUp = gaugeOverInstances<{ service: string }>("crm.up", {
  description: "1 for each service this process runs",
  unit: "{service}",
  value: () => 1,
  pick: "highest",
  attributes: (running) => ({ "crm.service": running.service }),
});

/** Reports `service` as running until the returned function is called. */
export function reportServiceUp(service: string): () => void {
  const running = { service };
  servicesUp.add(running);
  return () => servicesUp.remove(running);
}
