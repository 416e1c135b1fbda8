/**
 * The collection routes: a server's custom events by secret key, and page
 * views, custom events and leads from pages (the site by their Origin, which
 * CORS echoes). A lead may come from either.
 */
import { BROWSER_CORS_POLICY } from "../cors.ts";
import {
  always,
  corsAnswerHeaders,
  header,
  type Json,
  json,
  jsonAnswer,
  ref,
  refusal,
  upstream,
} from "../openapi/components.ts";
import { type MethodRoute, NO_STORE, type RequestBody, type RouteEntry } from "./table.ts";

const MARKETING_TAG = "marketing";

/** Request bodies of every collection route: 8 KB. */
export const MARKETING_BODY_LIMIT = 8 * 1024;

/** The collection routes, each a handler of marketing_api.ts. */
export type Collect = "event" | "view" | "act" | "lead";

const body = (schema: string, beacon: boolean): RequestBody => ({
  schema,
  limit: MARKETING_BODY_LIMIT,
  ...(beacon ? { beacon } : {}),
});
const atMost = (request: RequestBody) => `${request.limit / 1024} KB at most.`;

function beaconBody(request: RequestBody, description: string): Json {
  return {
    required: true,
    description: `${description} JSON, sent as text/plain (a beacon) or application/json; ${
      atMost(request)
    }`,
    content: {
      "text/plain": {
        schema: {
          type: "string",
          contentMediaType: "application/json",
          contentSchema: ref(request.schema),
        },
      },
      "application/json": { schema: ref(request.schema) },
    },
  };
}

const BROWSER_PARAMS = [{
  name: "Origin",
  in: "header",
  required: false,
  description: "The page's origin: it names the site (else the Referer's origin).",
  schema: { type: "string" },
}];

const accepted = {
  description: "Stored (or an undeclared event name, dropped silently).",
  headers: { "X-Request-Id": header("RequestId"), ...corsAnswerHeaders(BROWSER_CORS_POLICY) },
};

const tooLarge = (request: RequestBody) =>
  `\`payload_too_large\`: over ${request.limit / 1024} KB.`;

function browserCollect(
  handler: Collect,
  id: string,
  summary: string,
  request: RequestBody,
  what: string,
): MethodRoute<Collect> {
  return {
    handler,
    cache: NO_STORE,
    request,
    operation: {
      tags: [MARKETING_TAG],
      operationId: id,
      summary,
      security: [],
      parameters: BROWSER_PARAMS,
      requestBody: beaconBody(request, what),
      responses: {
        "204": accepted,
        "400": refusal(
          "`unknown_domain` (the Origin is no site's domain) or `invalid_body`.",
          "echo",
        ),
        "408": refusal("`request_timeout`: the body did not arrive in time.", "echo"),
        "413": refusal(tooLarge(request), "echo"),
        "429": refusal("`rate_limit_exceeded`: per IP or per site.", "echo"),
        ...always(),
        ...upstream(),
      },
    },
  };
}

const serverRefusals = (request: RequestBody, cors?: "echo") => ({
  "400": refusal(
    "`invalid_body` (not a JSON object, not application/json, or a field breaks its rule: " +
      "`field` and `problem` say which), `invalid_event_name`, `unknown_event` (with `name`).",
    cors,
  ),
  "401": refusal("`invalid_key`: missing, malformed or revoked secret key.", cors),
  "408": refusal("`request_timeout`: the body did not arrive in time.", cors),
  "413": refusal(tooLarge(request), cors),
  "429": refusal("`rate_limit_exceeded`: per IP or per site.", cors),
  ...always(),
  ...upstream(),
});

const SERVER_EVENT = body("ServerEvent", false);
const PAGE_VIEW = body("PageView", true);
const BROWSER_EVENT = body("BrowserEvent", true);
const LEAD = body("Lead", true);

const leadBrowser = browserCollect(
  "lead",
  "postLead",
  "A lead, from a page or a server",
  LEAD,
  "A lead:",
);

export const MARKETING_ROUTES: readonly RouteEntry<Collect>[] = [
  {
    path: "/marketing/event",
    name: "ServerEvent",
    tag: MARKETING_TAG,
    methods: {
      POST: {
        handler: "event",
        cache: NO_STORE,
        request: SERVER_EVENT,
        answer: "EventAccepted",
        operation: {
          tags: [MARKETING_TAG],
          operationId: "postServerEvent",
          summary: "A custom event from a server",
          security: [{ secretKey: [] }],
          requestBody: {
            required: true,
            description: atMost(SERVER_EVENT),
            content: json(ref(SERVER_EVENT.schema)),
          },
          responses: {
            "200": jsonAnswer("EventAccepted", "Accepted; `duplicate` for a repeated event id."),
            ...serverRefusals(SERVER_EVENT),
          },
        },
      },
    },
  },
  {
    path: "/marketing/view",
    name: "PageView",
    tag: MARKETING_TAG,
    cors: BROWSER_CORS_POLICY,
    methods: {
      POST: browserCollect(
        "view",
        "postPageView",
        "A page view from a page",
        PAGE_VIEW,
        "A page view:",
      ),
    },
  },
  {
    path: "/marketing/act",
    name: "BrowserEvent",
    tag: MARKETING_TAG,
    cors: BROWSER_CORS_POLICY,
    methods: {
      POST: browserCollect(
        "act",
        "postBrowserEvent",
        "A custom event from a page",
        BROWSER_EVENT,
        "A custom event:",
      ),
    },
  },
  {
    path: "/marketing/lead",
    name: "Lead",
    tag: MARKETING_TAG,
    cors: BROWSER_CORS_POLICY,
    methods: {
      POST: {
        ...leadBrowser,
        answer: "LeadAccepted",
        operation: {
          ...leadBrowser.operation,
          description: "From a page (the site by its Origin; 204), or from a server with " +
            "`x-event-key` (200 with the lead's id).",
          security: [{}, { secretKey: [] }],
          responses: {
            // The server's answer carries no CORS header; its refusals do (the route serves pages too).
            "200": jsonAnswer(
              "LeadAccepted",
              "Stored by a server's call; `duplicate` for a repeated lead id.",
            ),
            "204": accepted,
            ...serverRefusals(LEAD, "echo"),
            "400": refusal(
              "`unknown_domain` (from a page whose Origin is no site's domain), `invalid_body`.",
              "echo",
            ),
          },
        },
      },
    },
  },
];
