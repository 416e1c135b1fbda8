/**
 * The marketing routes. The gateway checks what is HTTP (method, body size,
 * content type, JSON, the caller, rate limits, CORS) and hands each request
 * to the batcher; ingest-service decides everything else, and the answer is
 * sent only when the item's batch has committed.
 *
 * | route                  | caller                               | success                      |
 * | POST /marketing/event  | server, x-event-key (secret key)     | 200 {ok, duplicate}          |
 * | POST /marketing/view   | browser, site by Origin              | 204                          |
 * | POST /marketing/act    | browser, site by Origin              | 204 (undeclared: dropped)    |
 * | POST /marketing/lead   | browser by Origin, or x-event-key    | 204, or 200 {ok, duplicate, id} |
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type IngestItemSchema,
  type ItemResult,
  Outcome,
  Source,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { type Code, publicFields } from "../lib/errors.ts";
import type { Logger } from "../lib/log.ts";
import type { Clock } from "../lib/clock.ts";
import { type Handler, JSON_TYPE, jsonError, type RequestContext, withRequestId } from "./http.ts";
import { withCors } from "./cors.ts";
import { httpErrorOf, httpErrorOfReason } from "./rpc_errors.ts";
import type { Caller, Callers } from "./callers.ts";
import type { RateLimiter } from "./rate_limit/policy.ts";
import { type Batcher, OverloadedError } from "./batcher.ts";
import {
  bodyTimeout,
  BodyTimeoutError,
  BodyTooLargeError,
  parseJson,
  readLimitedText,
} from "./body.ts";
import { type BodyKind, ingestBodyOf } from "./ingest_body.ts";
import { isJsonObject } from "../lib/json.ts";
import type { Collect } from "./routes/marketing.ts";

export type IngestItemInit = MessageInitShape<typeof IngestItemSchema>;

interface RouteDef {
  kind: BodyKind;
  /** Who may call: a server with a secret key, a browser page, or either (by the header). */
  caller: "server" | "browser" | "either";
}

/** What each collection route of the table (routes/marketing.ts) takes, and from whom. */
const COLLECTED: Record<Collect, RouteDef> = {
  event: { kind: "event", caller: "server" },
  view: { kind: "pageView", caller: "browser" },
  act: { kind: "event", caller: "browser" },
  lead: { kind: "lead", caller: "either" },
};

export interface MarketingApiOptions {
  batcher: Batcher<IngestItemInit, ItemResult>;
  callers: Callers;
  limiter: RateLimiter;
  log: Logger;
  clock: Clock;
  /** HTTP_BODY_TIMEOUT_MS: the longest a body may take to arrive. */
  bodyTimeoutMs?: number;
}

const SERVER_ANSWER_HEADERS = { "content-type": JSON_TYPE, "cache-control": "no-store" };
const STORED_ANSWER = JSON.stringify({ ok: true, duplicate: false });
const DUPLICATE_ANSWER = JSON.stringify({ ok: true, duplicate: true });

/** The page's origin: the Origin header, else the origin of the Referer header. */
export function pageOrigin(headers: Headers): string | null {
  const origin = headers.get("origin");
  if (origin) return origin;
  const referer = headers.get("referer");
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

function isJsonType(contentType: string | null): boolean {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

export function marketingApi(options: MarketingApiOptions): Record<Collect, Handler> {
  const { clock } = options;

  const handle = async (
    ctx: RequestContext,
    def: RouteDef,
    cors: Readonly<Record<string, string>>,
  ) => {
    const { request } = ctx;
    const limit = ctx.match!.method.request!.limit;
    const error = (status: number, body: { message: string; [k: string]: unknown }) =>
      withCors(jsonError(status, body), cors);
    const receivedAtMs = clock.now();
    const key = request.headers.get("x-event-key");
    const asServer = def.caller === "server" || (def.caller === "either" && key !== null);

    const declared = Number(request.headers.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      return error(413, { message: "payload_too_large" });
    }
    let caller: Caller;
    if (asServer) {
      caller = await options.callers.secretKey(key ?? "");
    } else {
      const origin = pageOrigin(request.headers);
      caller = origin
        ? await options.callers.origin(origin)
        : { ok: false, reason: "unknown_domain" };
    }
    const limited = await options.limiter.marketingLimited({
      ip: ctx.ip,
      siteId: caller.ok ? caller.siteId : undefined,
    }, receivedAtMs);
    if (limited) return error(429, { message: "rate_limit_exceeded" });
    if (!caller.ok) {
      return asServer
        ? error(401, { message: "invalid_key" })
        : error(400, { message: "unknown_domain" });
    }
    ctx.siteId = caller.siteId;
    // sendBeacon sends text/plain; servers must say what they send. The
    // specification's error table has no 415, so this is its invalid_body.
    if (asServer && !isJsonType(request.headers.get("content-type"))) {
      return error(400, {
        message: "invalid_body",
        problem: "content-type must be application/json",
      });
    }
    let body: string;
    try {
      body = await readLimitedText(request, limit, options.bodyTimeoutMs);
    } catch (thrown) {
      if (thrown instanceof BodyTooLargeError) return error(413, { message: "payload_too_large" });
      if (thrown instanceof BodyTimeoutError) return bodyTimeout(error);
      // The client went away or cut its upload short: its fault, not a service's.
      return error(400, {
        message: "invalid_body",
        problem: "the body could not be read to its end",
      });
    }
    const parsed = parseJson(body);
    if (!isJsonObject(parsed)) return error(400, { message: "invalid_body" });
    const userAgent = request.headers.get("user-agent") ?? "";
    const item: IngestItemInit = {
      source: asServer ? Source.SERVER : Source.BROWSER,
      siteId: caller.siteId,
      receivedAtMs: BigInt(receivedAtMs),
      clientIp: ctx.ip,
      userAgent,
      body: ingestBodyOf(def.kind, parsed, {
        gpc: request.headers.get("sec-gpc")?.trim() === "1",
      }),
    };
    // The typed item takes about the room of the JSON it came from.
    const result = await options.batcher.add(item, body.length + userAgent.length + 64);
    if (result.outcome === Outcome.REFUSED) {
      const failure = httpErrorOfReason(
        result.code as Code,
        result.error?.reason ?? "invalid_body",
        publicFields(result.error),
      );
      return error(failure.status, failure.body);
    }
    // The answers are made with all their headers at once: a header set on a
    // made Response costs Deno the native answer it prepared (http.ts).
    if (!asServer) return new Response(null, { status: 204, headers: withRequestId(ctx, cors) });
    const duplicate = result.outcome === Outcome.DUPLICATE;
    const answer = def.kind === "lead"
      ? JSON.stringify({ ok: true, duplicate, id: result.id })
      : duplicate
      ? DUPLICATE_ANSWER
      : STORED_ANSWER;
    return new Response(answer, {
      status: 200,
      headers: withRequestId(ctx, SERVER_ANSWER_HEADERS),
    });
  };

  const collect = (def: RouteDef): Handler => async (ctx) => {
    // The route's CORS policy: none where only servers call, else on every answer but a server's.
    const cors = ctx.match!.cors;
    try {
      return await handle(ctx, def, cors);
    } catch (thrown) {
      if (thrown instanceof OverloadedError) {
        return withCors(jsonError(503, { message: "overloaded" }, { "retry-after": "1" }), cors);
      }
      const failure = httpErrorOf(thrown);
      if (failure.serverSide) {
        options.log.error("marketing request failed", { requestId: ctx.requestId, error: thrown });
      }
      return withCors(jsonError(failure.status, failure.body), cors);
    }
  };
  return {
    event: collect(COLLECTED.event),
    view: collect(COLLECTED.view),
    act: collect(COLLECTED.act),
    lead: collect(COLLECTED.lead),
  };
}
