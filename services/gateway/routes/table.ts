/**
 * The shape of the gateway's route table (routes/mod.ts): one entry per
 * path, and under it one entry per method with its handler, request and
 * answer schemas and cache policy; the path's CORS policy. The dispatcher
 * (dispatch.ts) and the OpenAPI document's `paths` (openapi/paths.ts) are
 * both made from the table, so neither can name a route the other lacks.
 */
import type { CorsPolicy } from "../cors.ts";

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

/** The methods a route can answer, in the order Allow lists them. */
export const ROUTE_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
export type Method = typeof ROUTE_METHODS[number];

/**
 * What an answer with a body says of caching: `shared` is the content API's
 * `public, max-age=0, s-maxage=N` (browsers revalidate every time, shared
 * caches keep the answer for the N seconds it stays right); `fixed` is one
 * Cache-Control value; `none` sends none (a redirect: clients apply their
 * own rules). Refusals are always `no-store`.
 */
export type CachePolicy = { kind: "shared" } | { kind: "fixed"; value: string } | { kind: "none" };

export const NO_STORE: CachePolicy = { kind: "fixed", value: "no-store" };
export const NO_CACHE: CachePolicy = { kind: "fixed", value: "no-cache" };
export const SHARED_CACHE: CachePolicy = { kind: "shared" };
export const NO_CACHE_HEADER: CachePolicy = { kind: "none" };

/** The Cache-Control of a `fixed` policy's answers. */
export function cacheControlOf(policy: CachePolicy): string {
  if (policy.kind !== "fixed") throw new Error(`a ${policy.kind} cache policy has no fixed value`);
  return policy.value;
}

/**
 * The Cache-Control of a `shared` answer that stays right for seconds more:
 * a CDN may serve it a minute past that while it fetches the new one, and a
 * day past it while the origin fails.
 */
export function sharedCacheControl(seconds: number): string {
  return `public, max-age=0, s-maxage=${seconds}, stale-while-revalidate=60, stale-if-error=86400`;
}

/** A request body: its schema (components.schemas), its size limit, how it may be sent. */
export interface RequestBody {
  schema: string;
  /** Bytes; over it 413 payload_too_large. */
  limit: number;
  /** Also as text/plain, the way navigator.sendBeacon sends JSON. */
  beacon?: boolean;
}

/** One method of a route. */
export interface MethodRoute<H extends string = string> {
  /** The handler's name in the gateway's handler set (main.ts supplies each). */
  handler: H;
  cache: CachePolicy;
  request?: RequestBody;
  /** The schema (components.schemas) of the success answer's JSON body, if it has one. */
  answer?: string;
  /** The rest of the OpenAPI operation: id, summary, parameters, every answer. */
  operation: Json;
}

export interface RouteEntry<H extends string = string> {
  /** `/content/v1/pages/:marker`: literal segments, `:name` parameters, a last `*` for any rest. */
  path: string;
  /** Names the path's operations in the document (`postQueryRefused`, `preflightQuery`). */
  name: string;
  /** The document's tag of the path's operations. */
  tag: string;
  cors?: CorsPolicy;
  /** Only the path as written: no trailing slash tolerated (files, probes). */
  exact?: boolean;
  /** Each `:name` parameter's description. */
  params?: Readonly<Record<string, string>>;
  methods: Partial<Record<Method, MethodRoute<H>>>;
  /** Every other method is answered as this one (probes: a prober may send any). */
  otherMethodsAs?: Method;
  /** Why the document leaves the route out; such a route may also go without a handler. */
  undocumented?: string;
}

/** The methods a path answers (HEAD where listed), then OPTIONS when it has a preflight. */
export function allowedMethods(entry: RouteEntry): string[] {
  const methods: string[] = ROUTE_METHODS.filter((m) => entry.methods[m]);
  if (entry.cors?.preflight) methods.push("OPTIONS");
  return methods;
}

/** The methods a preflight names: those a browser sends (not HEAD), and OPTIONS. */
export function preflightMethods(entry: RouteEntry): string[] {
  return allowedMethods(entry).filter((m) => m !== "HEAD");
}
