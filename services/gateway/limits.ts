/**
 * Bounds on what requests make the gateway hold: the size of a request's
 * head (header fields, their bytes, the URL) and how many requests it serves
 * at once, in total and per connection. Over a bound the answer is at once a
 * JSON error, never a queue: a queue without end grows memory and latency for
 * everyone, while a 503 with Retry-After lets a client or balancer go
 * elsewhere and come back.
 */
import type { HttpLimits } from "../lib/config.ts";
import { jsonError, type Middleware } from "./http.ts";
import { meter } from "../lib/telemetry.ts";

const refusals = meter.createCounter("crm.gateway.refused", {
  description: "Requests refused at once for a bound on what the gateway holds, per reason",
  unit: "{request}",
});

/**
 * The JSON error for a request whose head is over a bound, or undefined. Only
 * what Deno's server parsed is seen: repeated fields of one name arrive joined
 * as one, so they count once (their bytes all count).
 */
export function headRefusal(
  request: Request,
  url: URL,
  limits: Pick<HttpLimits, "maxHeaders" | "maxHeaderBytes" | "maxUrlBytes">,
): Response | undefined {
  // The URL parser percent-encodes, so the length in characters is the length in bytes.
  if (url.pathname.length + url.search.length > limits.maxUrlBytes) {
    return jsonError(414, { message: "url_too_long", limit: limits.maxUrlBytes });
  }
  let count = 0;
  let bytes = 0;
  // forEach walks the same pairs as for...of without an iterator result per field.
  request.headers.forEach((value, name) => {
    count++;
    // Header values are bytes on the wire (Latin-1 as Fetch exposes them): one per character.
    bytes += name.length + value.length;
  });
  if (count > limits.maxHeaders || bytes > limits.maxHeaderBytes) {
    return jsonError(431, {
      message: "headers_too_large",
      limits: { fields: limits.maxHeaders, bytes: limits.maxHeaderBytes },
    });
  }
  return undefined;
}

/** Requests in flight, in total and per connection, with a bound on each. */
export class InFlight {
  #total = 0;
  #perConnection = new Map<string, number>();

  constructor(readonly limits: Pick<HttpLimits, "maxInFlight" | "maxInFlightPerConnection">) {}

  get total(): number {
    return this.#total;
  }

  /** Takes a place for a request on connection, or returns false when either bound is reached. */
  enter(connection: string): boolean {
    const mine = this.#perConnection.get(connection) ?? 0;
    if (this.#total >= this.limits.maxInFlight) return false;
    if (mine >= this.limits.maxInFlightPerConnection) return false;
    this.#total++;
    this.#perConnection.set(connection, mine + 1);
    return true;
  }

  /** Gives back the place enter took. */
  leave(connection: string): void {
    this.#total--;
    const mine = (this.#perConnection.get(connection) ?? 1) - 1;
    if (mine <= 0) this.#perConnection.delete(connection);
    else this.#perConnection.set(connection, mine);
  }
}

/**
 * Paths never refused for load: the liveness probe must not restart a busy
 * gateway, and the readiness probe must not take a busy one out of the load
 * balancer, which would pile its share onto the others. Both answer from
 * memory at once.
 */
const ALWAYS_SERVED = new Set(["/livez", "/healthz"]);

/**
 * Refuses a request whose head is over the bounds (414, 431), and a request
 * beyond the in-flight bounds (503 overloaded, Retry-After: 1).
 */
export function requestLimits(limits: HttpLimits, inFlight = new InFlight(limits)): Middleware {
  return async (ctx, next) => {
    const refused = headRefusal(ctx.request, ctx.url, limits);
    if (refused) {
      refusals.add(1, {
        "crm.refusal": refused.status === 414 ? "url_too_long" : "headers_too_large",
      });
      return refused;
    }
    if (ALWAYS_SERVED.has(ctx.url.pathname)) return await next();
    if (!inFlight.enter(ctx.connection)) {
      ctx.refused = "overloaded";
      refusals.add(1, { "crm.refusal": ctx.refused });
      return jsonError(503, { message: "overloaded" }, { "retry-after": "1" });
    }
    try {
      return await next();
    } finally {
      inFlight.leave(ctx.connection);
    }
  };
}
