/**
 * POST /stats/v1/query (the reports), POST /stats/v1/funnel and GET
 * /stats/v1/site (the site's zone and declared event types, for the
 * dashboard). The gateway checks what is HTTP, in this order: the report key
 * (x-report-key; 401 invalid_key before the body is read), the key's limit
 * (429, one limit for the three routes), the body's size (16 KB; 413) and
 * that it is a JSON object (400 invalid_body). ingest-service judges the body
 * and answers it; the typed answer is written here as the public JSON.
 */
import type { Client } from "@connectrpc/connect";
import type { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import type { Logger } from "../lib/log.ts";
import type { Clock } from "../lib/clock.ts";
import { answerJson, funnelBodyOf, funnelJson, queryBodyOf, siteJson } from "../lib/stats/wire.ts";
import { type Handler, jsonError } from "./http.ts";
import { EXPOSED_HEADERS, withCors } from "./cors.ts";
import { jsonAnswer } from "./compression.ts";
import { httpErrorOf } from "./rpc_errors.ts";
import type { Callers } from "./callers.ts";
import type { RateLimiter } from "./rate_limit/policy.ts";
import {
  bodyTimeout,
  BodyTimeoutError,
  BodyTooLargeError,
  parseJson,
  readLimitedText,
} from "./body.ts";
import { isJsonObject } from "../lib/json.ts";

export const STATS_PATH = "/stats/v1/query";
export const FUNNEL_PATH = "/stats/v1/funnel";
export const SITE_PATH = "/stats/v1/site";
/** Request bodies of the query route: 16 KB. */
export const STATS_BODY_LIMIT = 16 * 1024;

/** Any origin may ask (the key is the credential; no cookies are involved). */
const STATS_CORS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS,
};

export interface StatsApiOptions {
  stats: Client<typeof StatsService>;
  callers: Callers;
  limiter: RateLimiter;
  log: Logger;
  clock: Clock;
  /** HTTP_BODY_TIMEOUT_MS: the longest a body may take to arrive. */
  bodyTimeoutMs?: number;
}

export function statsApi(options: StatsApiOptions): Handler {
  const now = () => options.clock.now();
  const error = (status: number, body: { message: string; [k: string]: unknown }) =>
    withCors(jsonError(status, body), STATS_CORS);

  return async (ctx) => {
    const { request, url } = ctx;
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, "") : url.pathname;
    if (path !== STATS_PATH && path !== FUNNEL_PATH && path !== SITE_PATH) {
      return jsonError(404, {
        message: `Cannot ${request.method} ${url.pathname}`,
        error: "Not Found",
        statusCode: 404,
      });
    }
    ctx.route = path;
    const method = path === SITE_PATH ? "GET" : "POST";
    if (request.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          ...STATS_CORS,
          "access-control-allow-methods": `${method}, OPTIONS`,
          "access-control-allow-headers": "x-report-key, content-type",
          "access-control-max-age": "86400",
        },
      });
    }
    if (request.method !== method) {
      return withCors(
        jsonError(405, { message: "method_not_allowed" }, { allow: `${method}, OPTIONS` }),
        STATS_CORS,
      );
    }
    try {
      const key = request.headers.get("x-report-key") ?? "";
      const caller = await options.callers.reportKey(key);
      if (!caller.ok) return error(401, { message: "invalid_key" });
      ctx.siteId = caller.siteId;
      if (await options.limiter.statsLimited(options.callers.hashOf(key), now())) {
        return error(429, { message: "rate_limit_exceeded" });
      }
      if (path === SITE_PATH) {
        const site = siteJson(await options.stats.site({ siteId: caller.siteId }));
        return await jsonAnswer(request, 200, site, { ...STATS_CORS, "cache-control": "no-store" });
      }
      let text: string;
      try {
        text = await readLimitedText(request, STATS_BODY_LIMIT, options.bodyTimeoutMs);
      } catch (thrown) {
        if (thrown instanceof BodyTooLargeError) {
          return error(413, { message: "payload_too_large" });
        }
        if (thrown instanceof BodyTimeoutError) return bodyTimeout(error);
        return error(400, {
          message: "invalid_body",
          problem: "the body could not be read to its end",
        });
      }
      const body = parseJson(text);
      if (!isJsonObject(body)) {
        return error(400, { message: "invalid_body", problem: "the body must be a JSON object" });
      }
      const answer = path === FUNNEL_PATH
        ? funnelJson(
          await options.stats.funnel({ siteId: caller.siteId, body: funnelBodyOf(body) }),
        )
        : answerJson(await options.stats.query({ siteId: caller.siteId, body: queryBodyOf(body) }));
      return await jsonAnswer(request, 200, answer, { ...STATS_CORS, "cache-control": "no-store" });
    } catch (thrown) {
      const failure = httpErrorOf(thrown);
      if (failure.serverSide) {
        options.log.error("stats request failed", { requestId: ctx.requestId, error: thrown });
      }
      return error(failure.status, failure.body);
    }
  };
}
