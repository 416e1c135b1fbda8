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
import { type Coding, COMPRESS_MIN_BYTES, varyWithEncoding } from "./compression.ts";
import { Precompressed } from "./precompressed.ts";
import { type Handler, JSON_TYPE, jsonError, type RequestContext, withRequestId } from "./http.ts";
import { httpErrorOf } from "./rpc_errors.ts";
import type { Callers } from "./callers.ts";
import type { RateLimiter } from "./rate_limit/policy.ts";
import { type CachedAnswer, ResponseCache } from "./response_cache.ts";
import type { ContentRead } from "./routes/content.ts";
import { sharedCacheControl } from "./routes/table.ts";

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

type Fetch = (
  siteId: string,
  params: Readonly<Record<string, string>>,
  query: URLSearchParams,
  preview: boolean,
) => Promise<{
  body?: RenderedBody;
}>;

const text = (query: URLSearchParams, name: string) => query.get(name) ?? undefined;

/** Keys that start so are preview keys (pv_ + 32 hex). */
const PREVIEW_PREFIX = "pv_";
/** A preview's answers: for the one who asked, never for a shared cache. */
export const PREVIEW_CACHE_CONTROL = "private, no-store";
/** The lang and fallback parameters as received. */
const languageParams = (query: URLSearchParams) => ({
  lang: { values: query.getAll("lang") },
  fallback: text(query, "fallback"),
});

/** The call to content-service behind each read of the route table. */
function contentFetches(content: Client<typeof ContentService>): Record<ContentRead, Fetch> {
  return {
    page: (siteId, { marker }, q) =>
      content.getPage({ siteId, marker, ...languageParams(q), empty: text(q, "empty") }),
    section: (siteId, { marker }, q) =>
      content.getSection({ siteId, marker, ...languageParams(q), empty: text(q, "empty") }),
    block: (siteId, { marker }, q) =>
      // An empty section parameter means no section, like an absent one.
      content.getBlock({
        siteId,
        marker,
        section: text(q, "section") || undefined,
        ...languageParams(q),
      }),
    blog: (siteId, _params, q, preview) =>
      content.listPosts({
        preview,
        siteId,
        ...languageParams(q),
        limit: text(q, "limit"),
        offset: text(q, "offset"),
        page: text(q, "page"),
        perPage: text(q, "perPage"),
      }),
    blogPost: (siteId, { slug }, q, preview) =>
      content.getPost({ siteId, slug, ...languageParams(q), preview }),
    langs: (siteId) => content.listLanguages({ siteId }),
    pages: (siteId) => content.listPages({ siteId }),
    sections: (siteId) => content.listSections({ siteId }),
    changes: (siteId, _params, q) => content.getChanges({ siteId, since: text(q, "since") }),
  };
}

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
  cors: Readonly<Record<string, string>>;
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

function headerSets(
  { body, tags }: CachedAnswer,
  seconds: number,
  coding: Coding,
  cors: Readonly<Record<string, string>>,
): HeaderSets {
  const notModified = {
    ...cors,
    "etag": body.etagOf(coding),
    "cache-control": sharedCacheControl(seconds),
    // What a CDN purges the answer by (the names content.published messages carry).
    ...(tags ? { "surrogate-key": tags, "cache-tag": tags } : {}),
    // An answer that may be compressed varies by Accept-Encoding, whichever encoding this is.
    "vary": body.compressible ? varyWithEncoding("x-crm-key") : "x-crm-key",
  };
  const ok: Record<string, string> = { ...notModified, "content-type": JSON_TYPE };
  if (coding !== "identity") ok["content-encoding"] = coding;
  return { notModified, ok, head: { ...ok, "content-length": String(body.lengthOf(coding)) } };
}

function prepared(
  cached: CachedAnswer,
  seconds: number,
  coding: Coding,
  cors: Readonly<Record<string, string>>,
): HeaderSets {
  let known = preparedAnswers.get(cached);
  if (known?.seconds !== seconds || known.cors !== cors) {
    known = { seconds, cors, identity: headerSets(cached, seconds, "identity", cors) };
    preparedAnswers.set(cached, known);
  }
  return known[coding] ??= headerSets(cached, seconds, coding, cors);
}

/**
 * The content reads of the route table (routes/content.ts), each answered
 * from the response cache or content-service. The dispatcher has matched the
 * route and method; its CORS headers go on every answer.
 */
export function contentApi(options: ContentApiOptions): Record<ContentRead, Handler> {
  const now = () => options.clock.now();
  const error = (
    ctx: RequestContext,
    status: number,
    body: { message: string; [k: string]: unknown },
  ) => jsonError(status, body, ctx.match!.cors);

  const answer = (ctx: RequestContext, cached: CachedAnswer): Response => {
    const seconds = Math.max(
      0,
      Math.min(options.cdnMaxAgeS, Math.floor((cached.freshUntil - now()) / 1000)),
    );
    const headers = ctx.request.headers;
    const coding = cached.body.codingFor(headers);
    const ready = prepared(cached, seconds, coding, ctx.match!.cors);
    // Each answer is made with every header it sends and never changed after.
    if (cached.body.matches(headers.get("if-none-match"))) {
      return new Response(null, { status: 304, headers: withRequestId(ctx, ready.notModified) });
    }
    if (ctx.request.method === "HEAD") {
      return new Response(null, { status: 200, headers: withRequestId(ctx, ready.head) });
    }
    return new Response(cached.body.bodyOf(coding) as BodyInit, {
      status: 200,
      headers: withRequestId(ctx, ready.ok),
    });
  };

  /** A preview key's answer: private, never stored by a shared cache; ETags and 304s as usual. */
  const previewAnswer = (ctx: RequestContext, fresh: CachedAnswer): Response => {
    const headers = ctx.request.headers;
    const coding = fresh.body.codingFor(headers);
    const notModified = {
      ...ctx.match!.cors,
      "etag": fresh.body.etagOf(coding),
      "cache-control": PREVIEW_CACHE_CONTROL,
      "vary": fresh.body.compressible ? varyWithEncoding("x-crm-key") : "x-crm-key",
    };
    if (fresh.body.matches(headers.get("if-none-match"))) {
      return new Response(null, { status: 304, headers: withRequestId(ctx, notModified) });
    }
    const ok: Record<string, string> = { ...notModified, "content-type": JSON_TYPE };
    if (coding !== "identity") ok["content-encoding"] = coding;
    if (ctx.request.method === "HEAD") {
      ok["content-length"] = String(fresh.body.lengthOf(coding));
      return new Response(null, { status: 200, headers: withRequestId(ctx, ok) });
    }
    return new Response(fresh.body.bodyOf(coding) as BodyInit, {
      status: 200,
      headers: withRequestId(ctx, ok),
    });
  };

  const handle = async (ctx: RequestContext, fetch: Fetch): Promise<Response> => {
    const { request, url } = ctx;
    if (options.limiter.contentIpRefused(ctx.ip, now())) {
      return error(ctx, 429, { message: "rate_limit_exceeded" });
    }
    // The header is the documented form; the query parameter is the fallback.
    const key = request.headers.get("x-crm-key") || url.searchParams.get("key") || "";
    const preview = key.startsWith(PREVIEW_PREFIX);
    const caller = preview
      ? await options.callers.previewKey(key)
      : await options.callers.siteKey(key);
    const limited = await options.limiter.contentLimited({
      ip: ctx.ip,
      validKey: caller.ok ? options.callers.hashOf(key) : undefined,
      invalidKey: !caller.ok,
    }, now());
    if (limited) return error(ctx, 429, { message: "rate_limit_exceeded" });
    if (!caller.ok) return error(ctx, 401, { message: "invalid_key" });
    ctx.siteId = caller.siteId;

    const load = async (): Promise<CachedAnswer> => {
      const { body } = await fetch(caller.siteId, ctx.match!.params, url.searchParams, preview);
      if (!body) throw new Error("content-service answered without a body");
      return {
        body: new Precompressed(keptBody(body.json), {
          etag: body.etag,
          byteLength: body.json.byteLength,
          compressFrom: COMPRESS_MIN_BYTES,
        }),
        tags: body.cacheTags,
        freshUntil: Number(body.freshUntilMs),
      };
    };
    // A preview's answer is never kept in or served from a shared cache, the gateway's included.
    if (preview) return previewAnswer(ctx, await load());
    return answer(ctx, await options.cache.get(ResponseCache.keyOf(caller.siteId, url), load));
  };

  const reader = (fetch: Fetch): Handler => async (ctx) => {
    try {
      return await handle(ctx, fetch);
    } catch (thrown) {
      const failure = httpErrorOf(thrown);
      if (failure.serverSide) {
        options.log.error("content request failed", { requestId: ctx.requestId, error: thrown });
      }
      return error(ctx, failure.status, failure.body);
    }
  };

  const fetches = contentFetches(options.content);
  return Object.fromEntries(
    Object.entries(fetches).map(([name, fetch]) => [name, reader(fetch)]),
  ) as Record<ContentRead, Handler>;
}
