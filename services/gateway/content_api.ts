/**
 * The content API: method and route checks, the site key, rate limits, then
 * the answer from the response cache or content-service. The gateway applies
 * no content rules of its own; it passes parameters through as received and
 * maps typed errors to HTTP.
 */
import type { Client } from "@connectrpc/connect";
import type { ContentService, RenderedBody } from "../lib/gen/crm/content/v1/content_pb.ts";
import type { Logger } from "../lib/log.ts";
import type { Clock } from "../lib/clock.ts";
import {
  type Coding,
  codingEtag,
  COMPRESS_MIN_BYTES,
  compressSync,
  matchesAnyCoding,
  negotiate,
  varyWithEncoding,
} from "./compression.ts";
import { type Handler, JSON_TYPE, jsonError, type RequestContext, withRequestId } from "./http.ts";
import { CONTENT_CORS, contentPreflight, withCors } from "./cors.ts";
import { httpErrorOf } from "./rpc_errors.ts";
import type { Callers } from "./callers.ts";
import type { RateLimiter } from "./rate_limit/policy.ts";
import { type CachedAnswer, ResponseCache } from "./response_cache.ts";
import { matchRoute, route } from "./routes.ts";
import { boundedMemo } from "../lib/memo.ts";

export interface ContentApiOptions {
  content: Client<typeof ContentService>;
  callers: Callers;
  limiter: RateLimiter;
  cache: ResponseCache;
  log: Logger;
  /** s-maxage for CDNs, capped by how long each answer stays right. */
  cdnMaxAgeS: number;
  clock: Clock;
}

type Fetch = (siteId: string, params: Record<string, string>, query: URLSearchParams) => Promise<{
  body?: RenderedBody;
}>;

const text = (query: URLSearchParams, name: string) => query.get(name) ?? undefined;
const lang = (query: URLSearchParams) => ({ values: query.getAll("lang") });

function contentRoutes(content: Client<typeof ContentService>) {
  return [
    route<Fetch>(
      "/content/v1/pages/:marker",
      (siteId, { marker }, q) =>
        content.getPage({ siteId, marker, lang: lang(q), empty: text(q, "empty") }),
    ),
    route<Fetch>(
      "/content/v1/sections/:marker",
      (siteId, { marker }, q) =>
        content.getSection({ siteId, marker, lang: lang(q), empty: text(q, "empty") }),
    ),
    route<Fetch>("/content/v1/blocks/:marker", (siteId, { marker }, q) =>
      // An empty section parameter means no section, like an absent one.
      content.getBlock({
        siteId,
        marker,
        section: text(q, "section") || undefined,
        lang: lang(q),
      })),
    route<Fetch>("/content/v1/blog", (siteId, _params, q) =>
      content.listPosts({
        siteId,
        lang: lang(q),
        limit: text(q, "limit"),
        offset: text(q, "offset"),
        page: text(q, "page"),
        perPage: text(q, "perPage"),
      })),
    route<Fetch>(
      "/content/v1/blog/:slug",
      (siteId, { slug }, q) => content.getPost({ siteId, slug, lang: lang(q) }),
    ),
    route<Fetch>("/content/v1/langs", (siteId) => content.listLanguages({ siteId })),
  ];
}

/** Every content route's pattern, for tests that must cover each (the fetches are never called). */
export const CONTENT_ROUTE_PATTERNS: readonly string[] = contentRoutes(
  undefined as unknown as Client<typeof ContentService>,
).map((r) => r.pattern);

/** The header sets of one encoding of an answer. */
interface HeaderSets {
  notModified: Record<string, string>;
  ok: Record<string, string>;
  head: Record<string, string>;
}

/**
 * The header sets a hot read sends, made once per cached answer and
 * encoding instead of per request (they change only when s-maxage's whole
 * seconds do).
 */
interface Prepared {
  seconds: number;
  identity: HeaderSets;
  br?: HeaderSets;
  gzip?: HeaderSets;
}

const preparedAnswers = new WeakMap<CachedAnswer, Prepared>();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The body to keep: its text when the bytes are exactly UTF-8 (Deno sends a
 * string with less work than a byte array, which it copies for every
 * response; the bytes on the wire are the same), else a plain copy of the
 * bytes (the decoded ones are a view into the whole RPC frame, a Node
 * Buffer, slower to send and keeping the frame alive).
 */
function keptBody(bytes: Uint8Array): string | Uint8Array {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return new Uint8Array(bytes);
  }
}

/** The compressed body of an answer, made on the first read that asks for it and kept beside it. */
export function encodedBody(cached: CachedAnswer, coding: "br" | "gzip"): Uint8Array {
  const encoded = cached.encoded ??= {};
  return encoded[coding] ??= compressSync(cached.body, coding);
}

function headerSets(
  cached: CachedAnswer,
  seconds: number,
  coding: Coding,
): HeaderSets {
  const large = cached.byteLength >= COMPRESS_MIN_BYTES;
  const notModified = {
    ...CONTENT_CORS,
    "etag": codingEtag(cached.etag, coding),
    "cache-control": `public, max-age=0, s-maxage=${seconds}`,
    // An answer that may be compressed varies by Accept-Encoding, whichever encoding this is.
    "vary": large ? varyWithEncoding("x-crm-key") : "x-crm-key",
  };
  const ok: Record<string, string> = { ...notModified, "content-type": JSON_TYPE };
  if (coding !== "identity") ok["content-encoding"] = coding;
  const length = coding === "identity" ? cached.byteLength : encodedBody(cached, coding).byteLength;
  return { notModified, ok, head: { ...ok, "content-length": String(length) } };
}

function prepared(cached: CachedAnswer, seconds: number, coding: Coding): HeaderSets {
  let known = preparedAnswers.get(cached);
  if (known?.seconds !== seconds) {
    known = { seconds, identity: headerSets(cached, seconds, "identity") };
    preparedAnswers.set(cached, known);
  }
  return known[coding] ??= headerSets(cached, seconds, coding);
}

export function contentApi(options: ContentApiOptions): Handler {
  const table = contentRoutes(options.content);
  // Clients read the same few paths: their match (shared, never changed) is remembered.
  const matchPath = boundedMemo((path) => matchRoute(table, path), {
    maxEntries: 5_000,
    maxInputLength: 512,
  });
  const now = () => options.clock.now();
  const error = (
    status: number,
    body: { message: string; [k: string]: unknown },
    headers: HeadersInit = {},
  ) => withCors(jsonError(status, body, headers), CONTENT_CORS);

  const answer = (ctx: RequestContext, cached: CachedAnswer): Response => {
    const seconds = Math.max(
      0,
      Math.min(options.cdnMaxAgeS, Math.floor((cached.freshUntil - now()) / 1000)),
    );
    const headers = ctx.request.headers;
    const coding = negotiate(headers, cached.byteLength);
    const ready = prepared(cached, seconds, coding);
    // Each answer is made with every header it sends and never changed after.
    if (matchesAnyCoding(headers.get("if-none-match"), cached.etag)) {
      return new Response(null, { status: 304, headers: withRequestId(ctx, ready.notModified) });
    }
    if (ctx.request.method === "HEAD") {
      return new Response(null, { status: 200, headers: withRequestId(ctx, ready.head) });
    }
    const body = coding === "identity" ? cached.body : encodedBody(cached, coding);
    return new Response(body as BodyInit, { status: 200, headers: withRequestId(ctx, ready.ok) });
  };

  const handle = async (ctx: RequestContext): Promise<Response> => {
    const { request, url } = ctx;
    // A preflight is answered for any path, before routing, as CORS middleware does.
    if (request.method === "OPTIONS") return contentPreflight();
    // Route before method: a URL that matches no endpoint is a 404 whatever the method.
    const match = matchPath(url.pathname);
    if (!match) {
      return error(404, {
        message: `Cannot ${request.method} ${url.pathname}`,
        error: "Not Found",
        statusCode: 404,
      });
    }
    ctx.route = match.route.pattern;
    if (request.method !== "GET" && request.method !== "HEAD") {
      return error(405, { message: "method_not_allowed" }, { allow: "GET, HEAD, OPTIONS" });
    }

    if (options.limiter.contentIpRefused(ctx.ip, now())) {
      return error(429, { message: "rate_limit_exceeded" });
    }
    // The header is the documented form; the query parameter is the fallback.
    const key = request.headers.get("x-crm-key") || url.searchParams.get("key") || "";
    const caller = await options.callers.siteKey(key);
    const limited = await options.limiter.contentLimited({
      ip: ctx.ip,
      validKey: caller.ok ? options.callers.hashOf(key) : undefined,
      invalidKey: !caller.ok,
    }, now());
    if (limited) return error(429, { message: "rate_limit_exceeded" });
    if (!caller.ok) return error(401, { message: "invalid_key" });
    ctx.siteId = caller.siteId;

    const cacheKey = ResponseCache.keyOf(caller.siteId, url);
    const cached = await options.cache.get(cacheKey, async () => {
      const { body } = await match.route.target(caller.siteId, match.params, url.searchParams);
      if (!body) throw new Error("content-service answered without a body");
      return {
        body: keptBody(body.json),
        byteLength: body.json.byteLength,
        etag: body.etag,
        freshUntil: Number(body.freshUntilMs),
      };
    });
    return answer(ctx, cached);
  };

  return async (ctx) => {
    try {
      return await handle(ctx);
    } catch (thrown) {
      const failure = httpErrorOf(thrown);
      if (failure.serverSide) {
        options.log.error("content request failed", { requestId: ctx.requestId, error: thrown });
      }
      return error(failure.status, failure.body);
    }
  };
}
