/**
 * The reports' routes (analytics.md): the query, the funnel and the site's
 * description, by report key, from any origin, never stored.
 */
import { STATS_CORS_POLICY } from "../cors.ts";
import {
  always,
  cacheHeader,
  corsAnswerHeaders,
  header,
  HEADERS,
  type Json,
  json,
  ref,
  refusal,
  upstream,
} from "../openapi/components.ts";
import { type MethodRoute, NO_STORE, type RequestBody, type RouteEntry } from "./table.ts";

const STATS_TAG = "reports";

/** Request bodies of the reports' routes: 16 KB. */
export const STATS_BODY_LIMIT = 16 * 1024;

/** The reports' routes, each a handler of stats_api.ts. */
export type Report =
  | "query"
  | "funnel"
  | "site"
  | "segments"
  | "createSegment"
  | "replaceSegment"
  | "deleteSegment";

/** What a segments route answers beyond a report's: its success status, and its refusals. */
interface SegmentAnswer {
  status: 200 | 201 | 204;
  /** 404 `segment_not_found` (a route naming a segment by id). */
  byId?: boolean;
  /** 409 `segment_exists` (a route writing a name). */
  names?: boolean;
  /** A write: a report key only (a share link may only list segments). */
  writes?: boolean;
}

function statsRoute(
  handler: Report,
  id: string,
  summary: string,
  answer: string | undefined,
  body?: string,
  segment?: SegmentAnswer,
): MethodRoute<Report> {
  const request: RequestBody | undefined = body
    ? { schema: body, limit: STATS_BODY_LIMIT }
    : undefined;
  const operation: Json = {
    tags: [STATS_TAG],
    operationId: id,
    summary,
    security: segment?.writes
      ? [{ reportKey: [] }]
      : [{ reportKey: [] }, { shareLink: [] }, { shareLink: [], sharePassword: [] }],
    responses: {
      [String(segment?.status ?? 200)]: {
        description: segment?.status === 204 ? "Done; no body." : "The answer.",
        headers: {
          "X-Request-Id": header("RequestId"),
          "Cache-Control": cacheHeader(NO_STORE),
          ...(answer
            ? {
              Vary: { ...HEADERS.Vary, required: false },
              "Content-Encoding": header("ContentEncoding"),
            }
            : {}),
          ...corsAnswerHeaders(STATS_CORS_POLICY),
        },
        ...(answer ? { content: json(ref(answer)) } : {}),
      },
      ...(request
        ? {
          "400": refusal(
            "`invalid_body` (not a JSON object) or `invalid_query` (`field` names the body " +
              "field at fault, `problem` what is wrong).",
            "any",
          ),
        }
        : {}),
      "401": refusal(
        segment?.writes
          ? "`invalid_key`: missing, malformed, unknown or revoked report key (a share link " +
            "may only list segments)."
          : "`invalid_key`: missing, malformed, unknown or revoked report key, or unknown, " +
            "revoked or expired share link; `password_required`: a share link's password " +
            "missing or wrong.",
        "any",
      ),
      ...(segment?.byId ? { "404": refusal("`segment_not_found`: no such segment.", "any") } : {}),
      ...(segment?.names
        ? { "409": refusal("`segment_exists`: the site has a segment of that name.", "any") }
        : {}),
      ...(request
        ? {
          "408": refusal("`request_timeout`: the body did not arrive in time.", "any"),
          "413": refusal(`\`payload_too_large\`: over ${request.limit / 1024} KB.`, "any"),
        }
        : {}),
      "429": refusal(
        "`rate_limit_exceeded`: 600 a minute per report key or share link, or a share link " +
          "given 10 wrong passwords this minute.",
        "any",
      ),
      ...always(),
      ...upstream(),
      "504": refusal(
        "`timeout`: the answer took longer than REPORT_TIMEOUT_MS (10 s unless set) and was " +
          "cancelled in Postgres; or `upstream_timeout`: the service did not answer in time.",
        "any",
      ),
    },
  };
  if (request) {
    operation.requestBody = {
      required: true,
      description: `${request.limit / 1024} KB at most.`,
      content: json(ref(request.schema)),
    };
  }
  return {
    handler,
    cache: NO_STORE,
    ...(request ? { request } : {}),
    ...(answer ? { answer } : {}),
    operation,
  };
}

export const STATS_ROUTES: readonly RouteEntry<Report>[] = [
  {
    path: "/stats/v1/query",
    name: "Query",
    tag: STATS_TAG,
    cors: STATS_CORS_POLICY,
    methods: { POST: statsRoute("query", "postQuery", "A reports query", "QueryAnswer", "Query") },
  },
  {
    path: "/stats/v1/funnel",
    name: "Funnel",
    tag: STATS_TAG,
    cors: STATS_CORS_POLICY,
    methods: { POST: statsRoute("funnel", "postFunnel", "A funnel", "FunnelAnswer", "Funnel") },
  },
  {
    path: "/stats/v1/site",
    name: "Site",
    tag: STATS_TAG,
    cors: STATS_CORS_POLICY,
    methods: {
      GET: statsRoute("site", "getSite", "The site's time zone and declared event types", "Site"),
    },
  },
  {
    path: "/stats/v1/segments",
    name: "Segments",
    tag: STATS_TAG,
    cors: STATS_CORS_POLICY,
    methods: {
      GET: statsRoute("segments", "getSegments", "The site's segments, by name", "Segments"),
      POST: statsRoute(
        "createSegment",
        "postSegment",
        "Saves a segment",
        "Segment",
        "SegmentBody",
        { status: 201, names: true, writes: true },
      ),
    },
  },
  {
    path: "/stats/v1/segments/:id",
    name: "SegmentById",
    tag: STATS_TAG,
    cors: STATS_CORS_POLICY,
    params: { id: "The segment's id (`seg_` and 24 lowercase hex)." },
    methods: {
      PUT: statsRoute(
        "replaceSegment",
        "putSegment",
        "Replaces a segment's name and filters",
        "Segment",
        "SegmentBody",
        { status: 200, byId: true, names: true, writes: true },
      ),
      DELETE: statsRoute(
        "deleteSegment",
        "deleteSegment",
        "Removes a segment",
        undefined,
        undefined,
        { status: 204, byId: true, writes: true },
      ),
    },
  },
];
