/**
 * POST /stats/v1/query (the reports), POST /stats/v1/funnel and GET
 * /stats/v1/site (the site's zone and declared event types, for the
 * dashboard). The gateway checks what is HTTP, in this order: the report key
 * (x-report-key; 401 invalid_key before the body is read) or, in its place, a
 * share link (x-share-link, with x-share-password for a link that has one:
 * 429 while the link is locked by wrong passwords, 401 invalid_key or
 * password_required), the key's or link's limit (429, one limit for the
 * three routes), the body's size (16 KB; 413) and that it is a JSON object
 * (400 invalid_body). ingest-service judges the body and answers it on the
 * reports' own connections (the replica when there is one); the typed answer
 * is written here as the public JSON. A share link reads only: every route
 * here is a read of its one site.
 */
import type { Client } from "@connectrpc/connect";
import type { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import type { Logger } from "../lib/log.ts";
import type { Clock } from "../lib/clock.ts";
import { answerJson, funnelBodyOf, funnelJson, queryBodyOf, siteJson } from "../lib/stats/wire.ts";
import { type Handler, jsonError } from "./http.ts";
import { jsonAnswer } from "./compression.ts";
import { httpErrorOf } from "./rpc_errors.ts";
import type { Callers } from "./callers.ts";
import type { ShareCallers } from "./share_callers.ts";
import type { RateLimiter } from "./rate_limit/policy.ts";
import {
  bodyTimeout,
  BodyTimeoutError,
  BodyTooLargeError,
  parseJson,
  readLimitedText,
} from "./body.ts";
import { isJsonObject } from "../lib/json.ts";
import { segmentBodyOf, segmentJson } from "../lib/stats/segments_wire.ts";
import type { Report } from "./routes/stats.ts";
import { cacheControlOf } from "./routes/table.ts";

export interface StatsApiOptions {
  stats: Client<typeof StatsService>;
  callers: Callers;
  shares: ShareCallers;
  limiter: RateLimiter;
  log: Logger;
  clock: Clock;
  /** HTTP_BODY_TIMEOUT_MS: the longest a body may take to arrive. */
  bodyTimeoutMs?: number;
}

/** The reports' routes of the table (routes/stats.ts). */
export function statsApi(options: StatsApiOptions): Record<Report, Handler> {
  const now = () => options.clock.now();

  type StatsCaller =
    | { ok: true; siteId: string; limitName: string }
    | { ok: false; status: number; message: string };

  /** The report key's site, else the share link's; a share link's wrong password is counted. */
  const callerOf = async (request: Request, reportKeyOnly: boolean): Promise<StatsCaller> => {
    const key = request.headers.get("x-report-key");
    const shareId = request.headers.get("x-share-link");
    if (key === null && shareId !== null && !reportKeyOnly) {
      const password = request.headers.get("x-share-password") ?? "";
      if (await options.limiter.sharePasswordLocked(shareId, now())) {
        return { ok: false, status: 429, message: "rate_limit_exceeded" };
      }
      const share = await options.shares.link(shareId, password);
      if (share.ok) return { ok: true, siteId: share.siteId, limitName: `share:${shareId}` };
      if (share.reason === "password_required" && password !== "") {
        await options.limiter.sharePasswordWrong(shareId, now());
      }
      return { ok: false, status: 401, message: share.reason };
    }
    const reportKey = await options.callers.reportKey(key ?? "");
    if (!reportKey.ok) return { ok: false, status: 401, message: "invalid_key" };
    return { ok: true, siteId: reportKey.siteId, limitName: options.callers.hashOf(key!) };
  };

  const report = (
    answerOf: (
      siteId: string,
      body: Record<string, unknown> | undefined,
      params: Readonly<Record<string, string>>,
    ) => Promise<unknown>,
    status: 200 | 201 | 204 = 200,
    /** A write of segments: a share link may only list them. */
    reportKeyOnly = false,
  ): Handler =>
  async (ctx) => {
    const { request } = ctx;
    const { cors, method, params } = ctx.match!;
    const answer = async (siteId: string, body: Record<string, unknown> | undefined) => {
      const value = await answerOf(siteId, body, params);
      if (status === 204) return new Response(null, { status, headers });
      return await jsonAnswer(request, status, value, headers);
    };
    const error = (status: number, body: { message: string; [k: string]: unknown }) =>
      jsonError(status, body, cors);
    const headers = { ...cors, "cache-control": cacheControlOf(method.cache) };
    try {
      const caller = await callerOf(request, reportKeyOnly);
      if (!caller.ok) return error(caller.status, { message: caller.message });
      ctx.siteId = caller.siteId;
      if (await options.limiter.statsLimited(caller.limitName, now())) {
        return error(429, { message: "rate_limit_exceeded" });
      }
      if (!method.request) return await answer(caller.siteId, undefined);
      let text: string;
      try {
        text = await readLimitedText(request, method.request.limit, options.bodyTimeoutMs);
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
      return await answer(caller.siteId, body);
    } catch (thrown) {
      const failure = httpErrorOf(thrown);
      if (failure.serverSide) {
        options.log.error("stats request failed", { requestId: ctx.requestId, error: thrown });
      }
      return error(failure.status, failure.body);
    }
  };

  return {
    query: report(async (siteId, body) =>
      answerJson(await options.stats.query({ siteId, body: queryBodyOf(body!) }))
    ),
    funnel: report(async (siteId, body) =>
      funnelJson(await options.stats.funnel({ siteId, body: funnelBodyOf(body!) }))
    ),
    site: report(async (siteId) => siteJson(await options.stats.site({ siteId }))),
    segments: report(async (siteId) => ({
      segments: (await options.stats.listSegments({ siteId })).segments.map(segmentJson),
    })),
    createSegment: report(
      async (siteId, body) =>
        segmentJson(
          (await options.stats.createSegment({ siteId, body: segmentBodyOf(body!) })).segment!,
        ),
      201,
      true,
    ),
    replaceSegment: report(
      async (siteId, body, params) =>
        segmentJson(
          (await options.stats.replaceSegment({
            siteId,
            id: params.id,
            body: segmentBodyOf(body!),
          })).segment!,
        ),
      200,
      true,
    ),
    deleteSegment: report(
      async (siteId, _body, params) => {
        await options.stats.deleteSegment({ siteId, id: params.id });
      },
      204,
      true,
    ),
  };
}
