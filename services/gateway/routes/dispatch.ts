/**
 * Dispatch from the route table: the path names an entry (a literal path
 * looked up at once, a pattern matched and remembered), the method names its
 * handler. What every route shares is answered here from the entry: the CORS
 * preflight, 405 with Allow, and 404 for a path that names no route (with
 * the CORS headers of the area it falls in, so a browser can read it).
 */
import { boundedMemo } from "../../lib/memo.ts";
import { corsHeaders, type CorsPolicy, preflightAnswer, refusalCorsHeaders } from "../cors.ts";
import { type Handler, jsonError, type RequestContext } from "../http.ts";
import { matchRoute, type Route, route } from "./match.ts";
import {
  allowedMethods,
  type Method,
  type MethodRoute,
  preflightMethods,
  type RouteEntry,
} from "./table.ts";

/**
 * A part of the path space whose unrouted answers keep a route's CORS
 * policy: a preflight is answered for any path under it (as a CORS
 * middleware in front of the whole API does), and its 404s carry the
 * policy's headers.
 */
export interface Area {
  prefix: string;
  cors: CorsPolicy;
}

/** What the dispatcher tells a handler of the route it matched. */
export interface MatchedRoute {
  entry: RouteEntry;
  method: MethodRoute;
  params: Readonly<Record<string, string>>;
  /** The CORS headers of the route's answers to this request (shared: never change them). */
  cors: Readonly<Record<string, string>>;
}

interface Bound {
  entry: RouteEntry;
  handlers: Map<string, { method: MethodRoute; handler: Handler }>;
  other?: { method: MethodRoute; handler: Handler };
  allow: string;
  preflight: string;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

function notFound(ctx: RequestContext, cors: Readonly<Record<string, string>>): Response {
  return jsonError(404, {
    message: `Cannot ${ctx.request.method} ${ctx.url.pathname}`,
    error: "Not Found",
    statusCode: 404,
  }, cors);
}

/**
 * The gateway's dispatch over table. Every documented route must have its
 * handler; an undocumented one (a development aid) is left out without one.
 */
export function dispatcher<H extends string>(
  table: readonly RouteEntry<H>[],
  handlers: Readonly<Record<H, Handler | undefined>>,
  areas: readonly Area[] = [],
): Handler {
  const literal = new Map<string, Bound>();
  const patterns: Route<Bound>[] = [];
  for (const entry of table) {
    const bound: Bound = {
      entry,
      handlers: new Map(),
      allow: allowedMethods(entry).join(", "),
      preflight: preflightMethods(entry).join(", "),
    };
    for (const [method, spec] of Object.entries(entry.methods) as [Method, MethodRoute<H>][]) {
      const handler = handlers[spec.handler];
      if (!handler) {
        if (entry.undocumented) continue;
        throw new Error(`no handler ${spec.handler} for ${method} ${entry.path}`);
      }
      bound.handlers.set(method, { method: spec, handler });
    }
    if (bound.handlers.size === 0) continue;
    if (entry.otherMethodsAs) bound.other = bound.handlers.get(entry.otherMethodsAs);
    if (/[:*]/.test(entry.path)) {
      patterns.push(route(entry.path, bound));
    } else {
      literal.set(entry.path, bound);
      if (!entry.exact) literal.set(`${entry.path}/`, bound);
    }
  }
  // Clients read the same few paths: their match (shared, never changed) is remembered.
  const matchPattern = boundedMemo((path) => matchRoute(patterns, path), {
    maxEntries: 5_000,
    maxInputLength: 512,
  });
  const areaPreflight = new Map(
    areas.map((area) => [
      area,
      [...new Set(table.filter((e) => under(area, e.path)).flatMap(preflightMethods))].join(", "),
    ]),
  );

  return (ctx) => {
    const path = ctx.url.pathname;
    let bound = literal.get(path);
    let params = NO_PARAMS;
    if (!bound) {
      const found = matchPattern(path);
      if (found) {
        bound = found.route.target;
        params = found.params;
      }
    }
    const method = ctx.request.method;
    if (!bound) {
      const area = areas.find((a) => under(a, path));
      if (!area) return notFound(ctx, {});
      const origin = ctx.request.headers.get("origin");
      if (method === "OPTIONS" && area.cors.preflight) {
        return preflightAnswer(area.cors, origin, areaPreflight.get(area)!);
      }
      return notFound(ctx, refusalCorsHeaders(area.cors, origin));
    }
    const { entry } = bound;
    ctx.route = entry.path;
    const chosen = bound.handlers.get(method) ??
      (method === "OPTIONS" && entry.cors?.preflight ? undefined : bound.other);
    if (chosen) {
      ctx.match = {
        entry,
        method: chosen.method,
        params,
        cors: entry.cors?.origin === "echo"
          ? corsHeaders(entry.cors, ctx.request.headers.get("origin"))
          : corsHeaders(entry.cors, null),
      };
      return chosen.handler(ctx);
    }
    const origin = ctx.request.headers.get("origin");
    if (method === "OPTIONS" && entry.cors?.preflight) {
      return preflightAnswer(entry.cors, origin, bound.preflight);
    }
    return jsonError(405, { message: "method_not_allowed" }, {
      allow: bound.allow,
      ...refusalCorsHeaders(entry.cors, origin),
    });
  };
}

function under(area: Area, path: string): boolean {
  return path === area.prefix || path.startsWith(`${area.prefix}/`);
}
