/**
 * The OpenAPI 3.1 document of every public route of the gateway, written once
 * here: the gateway serves it at GET /openapi.json (serve.ts), CI lints it
 * (`deno task openapi:lint`), the HTTP tests check every answer they see
 * against it (test/helpers/openapi.ts), and the TypeScript client's types are
 * generated from it (clients/typescript).
 *
 * It is data built by a few helpers, so that what every route shares (the
 * refusals of the HTTP layer, 5xx, CORS, the methods a route refuses with
 * 405) is stated once and cannot drift between routes. Enumerations come
 * from the modules that parse the same values.
 */
import { BLOCK_TYPES } from "../../lib/formats.ts";
import {
  COMPARE_PRESET_ENUM,
  DIMENSIONS,
  DIRECTIONS,
  METRICS,
  OPERATORS,
  PRESETS,
  QUERY_FIELDS,
} from "../../lib/stats/names.ts";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: Json) => ({ "application/json": { schema } });

/** The methods OpenAPI names that the gateway's routes answer or refuse. */
const METHODS = ["get", "head", "post", "put", "patch", "delete", "options"] as const;
type Method = typeof METHODS[number];

// ---------------------------------------------------------------- schemas

const LANG_MAP = {
  type: "object",
  description:
    "Language code to value, in the site's language order; absent languages are left out.",
  propertyNames: { pattern: "^[a-z]{2}(-[A-Za-z]{2,4})?$" },
  additionalProperties: { type: "string" },
};

const nullable = (schema: Json) => ({ anyOf: [schema, { type: "null" }] });

const DATE = { type: "string", format: "date", examples: ["2026-11-21"] };
const DAY_RANGE = {
  type: "array",
  prefixItems: [DATE, DATE],
  minItems: 2,
  maxItems: 2,
  description: "First and last local day, inclusive.",
};

/** A metric's value: a number, or for `revenue` an object of currency to minor units. */
const METRIC_VALUE = {
  anyOf: [
    { type: "number" },
    { type: "object", additionalProperties: { type: "integer" }, description: "revenue" },
  ],
};
/** A change: percent or percentage points, null where the compared value is 0. */
const CHANGE_VALUE = {
  anyOf: [
    { type: "number" },
    { type: "null" },
    {
      type: "object",
      additionalProperties: { anyOf: [{ type: "number" }, { type: "null" }] },
      description: "revenue: currency to percent change",
    },
  ],
};

const DIMENSION_NAME = {
  type: "string",
  description: "A dimension name, or `event:props:KEY` for a declared event parameter.",
  anyOf: [{ enum: [...DIMENSIONS.keys()] }, { pattern: "^event:props:.+$" }],
};
const METRIC_NAME = { type: "string", enum: [...METRICS.keys()] };
const DATE_RANGE = {
  description: "A preset, or `[first, last]` local days.",
  anyOf: [{ type: "string", enum: [...PRESETS.keys()] }, DAY_RANGE],
};
const FILTER = {
  type: "array",
  description: "`[operator, dimension, values]`: the row holds when the operator does.",
  prefixItems: [
    { type: "string", enum: [...OPERATORS.keys()] },
    DIMENSION_NAME,
    { type: "array", items: { type: "string" }, minItems: 1 },
  ],
  minItems: 3,
  maxItems: 3,
};

/** The blocks' content by type (content-api.md, "Block content by type"). */
const BLOCK_CONTENT_RULES = [
  {
    if: { properties: { type: { enum: ["text", "html"] } } },
    then: { properties: { content: nullable(LANG_MAP) } },
  },
  {
    if: { properties: { type: { const: "link" } } },
    then: {
      properties: {
        content: nullable({
          type: "object",
          properties: { url: { type: "string" }, target: { type: "string" }, title: LANG_MAP },
        }),
      },
    },
  },
  {
    if: { properties: { type: { enum: ["image", "video"] } } },
    then: { properties: { content: nullable({ type: "object" }) } },
  },
  {
    if: { properties: { type: { const: "object" } } },
    then: { properties: { content: nullable({ type: "object" }) } },
  },
  {
    if: { properties: { type: { const: "array" } } },
    then: { properties: { content: nullable({ type: "array", items: { type: "object" } }) } },
  },
];

const SCHEMAS: Record<string, Json> = {
  Error: {
    type: "object",
    description: "Every error body: `message` names the reason; some reasons add fields.",
    required: ["message"],
    additionalProperties: false,
    properties: {
      message: { type: "string", examples: ["invalid_key"] },
      field: {
        type: "string",
        description: "invalid_body, invalid_query: the body field at fault",
      },
      problem: { type: "string", description: "What is wrong with the body" },
      lang: { type: "string", description: "invalid_lang, unknown_lang: the value sent" },
      unknown: { type: "array", items: { type: "string" }, description: "unknown_lang" },
      available: { type: "array", items: { type: "string" }, description: "unknown_lang" },
      max: { type: "integer", description: "too_many_langs" },
      name: { type: "string", description: "unknown_event: the name sent" },
      siteId: { type: "string", description: "site_not_found" },
      path: { type: "string", description: "invalid_manifest: the JSON path of the first fault" },
      limit: { type: "integer", description: "url_too_long: bytes" },
      limits: {
        type: "object",
        description: "headers_too_large",
        required: ["fields", "bytes"],
        additionalProperties: false,
        properties: { fields: { type: "integer" }, bytes: { type: "integer" } },
      },
      error: { type: "string", const: "Not Found", description: "A path that names no route" },
      statusCode: { type: "integer", const: 404, description: "A path that names no route" },
    },
  },
  Block: {
    type: "object",
    required: ["id", "marker", "name", "type", "multilang", "updatedAt", "content"],
    additionalProperties: false,
    properties: {
      id: { type: "integer", description: "Internal id; differs between installations." },
      marker: { type: "string" },
      name: { type: "string" },
      type: { type: "string", enum: [...BLOCK_TYPES] },
      multilang: { type: "boolean" },
      updatedAt: { type: "string", format: "date-time" },
      content: { description: "The value, shaped by `type`; null when empty." },
    },
    allOf: BLOCK_CONTENT_RULES,
  },
  Section: {
    type: "object",
    required: ["marker", "show", "content"],
    additionalProperties: false,
    properties: {
      marker: { type: "string" },
      show: { type: "boolean" },
      content: {
        type: "object",
        description: "Block marker to block, in manifest order.",
        additionalProperties: ref("Block"),
      },
    },
  },
  Page: {
    type: "object",
    required: ["marker", "href", "content"],
    additionalProperties: false,
    properties: {
      marker: { type: "string" },
      href: { type: "string" },
      content: {
        type: "object",
        description: "Section marker to section.",
        additionalProperties: ref("Section"),
      },
    },
  },
  PostSummary: {
    type: "object",
    required: ["slug", "author", "publishedAt", "title", "image"],
    additionalProperties: false,
    properties: {
      slug: { type: "string" },
      author: { type: ["string", "null"] },
      publishedAt: { type: ["string", "null"], format: "date-time" },
      title: LANG_MAP,
      image: LANG_MAP,
    },
  },
  Post: {
    type: "object",
    required: ["slug", "author", "publishedAt", "title", "image", "body"],
    additionalProperties: false,
    properties: {
      slug: { type: "string" },
      author: { type: ["string", "null"] },
      publishedAt: { type: ["string", "null"], format: "date-time" },
      title: LANG_MAP,
      image: LANG_MAP,
      body: { ...LANG_MAP, description: "Cleaned HTML per language." },
    },
  },
  PostAnswer: {
    type: "object",
    required: ["post"],
    additionalProperties: false,
    properties: { post: ref("Post") },
  },
  BlogWindow: {
    type: "object",
    required: ["total", "limit", "offset", "page", "pages", "hasMore", "nextOffset", "posts"],
    additionalProperties: false,
    properties: {
      total: { type: "integer", minimum: 0 },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      offset: { type: "integer", minimum: 0 },
      page: { type: ["integer", "null"], minimum: 1 },
      pages: { type: "integer", minimum: 0 },
      hasMore: { type: "boolean" },
      nextOffset: { type: ["integer", "null"] },
      posts: { type: "array", items: ref("PostSummary") },
    },
  },
  Languages: {
    type: "object",
    required: ["langs"],
    additionalProperties: false,
    properties: { langs: { type: "array", items: { type: "string" } } },
  },
  ServerEvent: {
    type: "object",
    description: "A custom event from a server. Each field has a short alias (`n` for `name`...).",
    properties: {
      name: { type: "string", maxLength: 64 },
      n: { type: "string" },
      event_id: { type: "string", maxLength: 128 },
      id: { type: "string" },
      visitor_id: { type: ["string", "null"] },
      vid: { type: ["string", "null"] },
      session_id: { type: ["string", "null"] },
      sid: { type: ["string", "null"] },
      params: ref("Params"),
      p: ref("Params"),
      value: { type: "integer", minimum: 0, maximum: 1e12 },
      val: { type: "integer", minimum: 0, maximum: 1e12 },
      currency: { type: "string", pattern: "^[A-Za-z0-9]{1,10}$" },
      cur: { type: "string" },
      url: { type: "string" },
      u: { type: "string" },
    },
    anyOf: [{ required: ["name"] }, { required: ["n"] }],
  },
  Params: {
    type: "object",
    description: "Event parameters; only declared ones are kept, converted to their type.",
    additionalProperties: { type: ["string", "number", "boolean"] },
  },
  BrowserEvent: {
    type: "object",
    description: "A custom event from a page (what crmTrack sends).",
    required: ["n"],
    properties: {
      n: { type: "string" },
      p: ref("Params"),
      id: { type: "string" },
      val: { type: "integer" },
      cur: { type: "string" },
      v: { type: ["string", "null"] },
      s: { type: ["string", "null"] },
      u: { type: "string" },
    },
  },
  PageView: {
    type: "object",
    description: "A page view from the widget.",
    required: ["u"],
    properties: {
      u: { type: "string", description: "Page URL" },
      v: { type: ["string", "null"], description: "Visitor id" },
      s: { type: ["string", "null"], description: "Session id" },
      t: { type: "string", description: "Title" },
      r: { type: "string", description: "Referrer" },
      sw: { type: "number" },
      sh: { type: "number" },
      vw: { type: "number" },
      vh: { type: "number" },
      pr: { type: "number" },
      l: { type: "string", description: "Browser language" },
      tz: { type: "string", description: "Browser time zone" },
      c: { type: "object", description: "Ad cookies", additionalProperties: { type: "string" } },
      a: { type: "string", description: "Landing URL" },
    },
  },
  Lead: {
    type: "object",
    description: "A lead; at least one of name, email, phone or message.",
    properties: {
      lead_id: { type: "string" },
      id: { type: "string" },
      form: { type: "string" },
      name: { type: "string" },
      email: { type: "string" },
      phone: { type: "string" },
      message: { type: "string" },
      fields: { type: "object" },
      visitor_id: { type: ["string", "null"] },
      vid: { type: ["string", "null"] },
      v: { type: ["string", "null"] },
      session_id: { type: ["string", "null"] },
      sid: { type: ["string", "null"] },
      s: { type: ["string", "null"] },
      url: { type: "string" },
      u: { type: "string" },
    },
    anyOf: [
      { required: ["name"] },
      { required: ["email"] },
      { required: ["phone"] },
      { required: ["message"] },
    ],
  },
  EventAccepted: {
    type: "object",
    required: ["ok", "duplicate"],
    additionalProperties: false,
    properties: {
      ok: { type: "boolean" },
      duplicate: { type: "boolean", description: "The event id was seen before; nothing stored." },
    },
  },
  LeadAccepted: {
    type: "object",
    required: ["ok", "duplicate", "id"],
    additionalProperties: false,
    properties: {
      ok: { type: "boolean" },
      duplicate: { type: "boolean" },
      id: { type: "string", description: "The stored lead's id." },
    },
  },
  Query: {
    type: "object",
    required: ["metrics", "date_range"],
    properties: {
      metrics: { type: "array", items: METRIC_NAME, minItems: 1, uniqueItems: true },
      date_range: DATE_RANGE,
      dimensions: { type: "array", items: DIMENSION_NAME, maxItems: 3, uniqueItems: true },
      filters: { type: "array", items: FILTER },
      order_by: {
        type: "array",
        items: {
          type: "array",
          prefixItems: [{ type: "string" }, { type: "string", enum: [...DIRECTIONS.keys()] }],
          minItems: 2,
          maxItems: 2,
        },
      },
      include: {
        type: "object",
        additionalProperties: false,
        properties: {
          totals: { type: "boolean" },
          bots: { type: "boolean" },
          time_labels: { type: "boolean" },
          compare: {
            anyOf: [{ type: "string", enum: [...COMPARE_PRESET_ENUM.keys()] }, DAY_RANGE],
          },
        },
      },
      limit: { type: "integer", minimum: 1, maximum: 10000 },
      offset: { type: "integer", minimum: 0 },
      time_zone: { type: "string", description: "IANA name, used while the site has none" },
    },
  },
  Comparison: {
    type: ["object", "null"],
    required: ["dimensions", "metrics", "change"],
    additionalProperties: false,
    properties: {
      dimensions: { type: "array", items: { type: ["string", "null"] } },
      metrics: { type: "array", items: METRIC_VALUE },
      change: { type: "array", items: CHANGE_VALUE },
    },
  },
  QueryAnswer: {
    type: "object",
    required: ["results", "meta", "query"],
    additionalProperties: false,
    properties: {
      results: {
        type: "array",
        items: {
          type: "object",
          required: ["dimensions", "metrics"],
          additionalProperties: false,
          properties: {
            dimensions: { type: "array", items: { type: ["string", "null"] } },
            metrics: { type: "array", items: METRIC_VALUE },
            comparison: ref("Comparison"),
          },
        },
      },
      totals: { type: "array", items: METRIC_VALUE },
      totalsComparison: ref("Comparison"),
      meta: {
        type: "object",
        required: ["timeZone", "dateRange", "totalRows"],
        additionalProperties: false,
        properties: {
          timeZone: { type: "string" },
          dateRange: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
          totalRows: { type: "integer", minimum: 0 },
          compareDateRange: {
            type: ["array", "null"],
            items: { type: "string" },
            minItems: 2,
            maxItems: 2,
            description: "Local days, or times for `30m` and `5m`",
          },
          timeLabels: { type: "array", items: { type: "string" } },
        },
      },
      query: {
        type: "object",
        description: "The query as understood, defaults filled in.",
        required: [...QUERY_FIELDS],
        additionalProperties: false,
        properties: {
          metrics: { type: "array", items: { type: ["string", "null"] } },
          date_range: {
            anyOf: [{ type: "string" }, { type: "null" }, {
              type: "array",
              items: { type: "string" },
            }],
          },
          dimensions: { type: "array", items: { type: ["string", "null"] } },
          filters: { type: "array", items: { type: "array" } },
          order_by: { type: "array", items: { type: "array" } },
          include: {
            type: "object",
            required: ["totals", "bots"],
            additionalProperties: false,
            properties: {
              totals: { type: "boolean" },
              bots: { type: "boolean" },
              time_labels: { type: "boolean" },
              compare: {
                anyOf: [{ type: "string" }, { type: "null" }, {
                  type: "array",
                  items: { type: "string" },
                }],
              },
            },
          },
          limit: { type: "integer" },
          offset: { type: "integer" },
          time_zone: { type: ["string", "null"] },
        },
      },
    },
  },
  FunnelStep: {
    oneOf: [
      {
        type: "object",
        required: ["page"],
        additionalProperties: false,
        properties: { page: { type: "string", description: "A path; `*` matches any run" } },
      },
      {
        type: "object",
        required: ["event"],
        additionalProperties: false,
        properties: { event: { type: "string" } },
      },
      {
        type: "object",
        required: ["lead"],
        additionalProperties: false,
        properties: { lead: { const: true } },
      },
    ],
  },
  Funnel: {
    type: "object",
    required: ["date_range", "steps"],
    properties: {
      date_range: DATE_RANGE,
      filters: { type: "array", items: FILTER, description: "`visit:` filters only" },
      include: {
        type: "object",
        additionalProperties: false,
        properties: { bots: { type: "boolean" } },
      },
      steps: { type: "array", items: ref("FunnelStep"), minItems: 2, maxItems: 8 },
    },
  },
  FunnelAnswer: {
    type: "object",
    required: ["steps", "meta"],
    additionalProperties: false,
    properties: {
      steps: {
        type: "array",
        items: {
          type: "object",
          required: ["step", "visitors", "visits", "conversionRate", "dropOff"],
          additionalProperties: false,
          properties: {
            step: ref("FunnelStep"),
            visitors: { type: "integer", minimum: 0 },
            visits: { type: "integer", minimum: 0 },
            conversionRate: { type: "number", minimum: 0, maximum: 100 },
            dropOff: { type: "integer" },
          },
        },
      },
      meta: {
        type: "object",
        required: ["timeZone", "dateRange"],
        additionalProperties: false,
        properties: {
          timeZone: { type: "string" },
          dateRange: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
        },
      },
    },
  },
  Site: {
    type: "object",
    required: ["siteId", "timeZone", "eventTypes"],
    additionalProperties: false,
    properties: {
      siteId: { type: "string" },
      timeZone: { type: ["string", "null"] },
      eventTypes: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "title", "status", "params", "bringsRevenue", "currency"],
          additionalProperties: false,
          properties: {
            name: { type: "string" },
            title: { type: "string" },
            status: { type: "string", examples: ["active", "archived"] },
            params: {
              type: "array",
              items: {
                type: "object",
                required: ["key", "type"],
                additionalProperties: false,
                properties: { key: { type: "string" }, type: { type: "string" } },
              },
            },
            bringsRevenue: { type: "boolean" },
            currency: { type: ["string", "null"] },
          },
        },
      },
    },
  },
  Health: {
    type: "object",
    required: ["status", "services"],
    additionalProperties: false,
    properties: {
      status: { type: "string", enum: ["ok", "degraded", "unavailable", "stopping"] },
      services: {
        type: "object",
        description: "Each backend's gRPC health state.",
        additionalProperties: {
          type: "string",
          enum: ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN", "UNREACHABLE"],
        },
      },
    },
  },
  Live: {
    type: "object",
    required: ["status"],
    additionalProperties: false,
    properties: { status: { const: "ok" } },
  },
  OpenApiDocument: {
    type: "object",
    description: "This document.",
    required: ["openapi", "info", "paths"],
    properties: {
      openapi: { type: "string" },
      info: { type: "object" },
      paths: { type: "object" },
    },
  },
};

// ---------------------------------------------------------------- headers

const HEADERS: Record<string, Json> = {
  RequestId: {
    description: "The request's id: the caller's X-Request-Id when well formed, else a new one.",
    required: true,
    schema: { type: "string", minLength: 1 },
  },
  ETag: {
    description: "Strong tag of this representation; each content coding has its own.",
    required: true,
    schema: { type: "string", pattern: '^"[A-Za-z0-9_-]+"$' },
  },
  ContentCacheControl: {
    description: "Browsers revalidate every time; shared caches keep the answer while it is right.",
    required: true,
    schema: { type: "string", pattern: "^public, max-age=0, s-maxage=\\d+$" },
  },
  NoStore: {
    required: true,
    schema: { type: "string", const: "no-store" },
  },
  Vary: {
    description: "`Accept-Encoding` is named on every answer of 1 KB or more.",
    required: true,
    schema: { type: "string" },
  },
  ContentEncoding: {
    description: "Set when the JSON body (1 KB or more) is compressed: `br` preferred, or `gzip`.",
    schema: { type: "string", enum: ["br", "gzip"] },
  },
  AnyOrigin: {
    required: true,
    schema: { type: "string", const: "*" },
  },
  EchoedOrigin: {
    description: "The request's Origin (`*` without one).",
    required: true,
    schema: { type: "string" },
  },
  ExposeHeaders: {
    description: "Response headers a browser script may read.",
    required: true,
    schema: { type: "string", pattern: "[Ee][Tt][Aa][Gg]" },
  },
  RetryAfter: {
    description: "Seconds to wait before trying again.",
    required: true,
    schema: { type: "string", pattern: "^\\d+$" },
  },
  Allow: {
    required: true,
    schema: { type: "string" },
  },
  AllowMethods: { required: true, schema: { type: "string" } },
  AllowHeaders: { required: true, schema: { type: "string" } },
  MaxAge: { required: true, schema: { type: "string", pattern: "^\\d+$" } },
  Location: { required: true, schema: { type: "string" } },
};

// -------------------------------------------------------------- responses

const errorContent = json(ref("Error"));
const errorHeaders = (cors?: "any" | "echo") => ({
  "X-Request-Id": header("RequestId"),
  "Cache-Control": header("NoStore"),
  ...(cors === "any" ? { "Access-Control-Allow-Origin": header("AnyOrigin") } : {}),
  ...(cors === "echo" ? { "Access-Control-Allow-Origin": header("EchoedOrigin") } : {}),
});

/** Answers of the HTTP layer, the same on every route (no CORS headers: made before routing). */
const SHARED_RESPONSES: Record<string, Json> = {
  UrlTooLong: {
    description: "`url_too_long`: the path and query are over the limit.",
    headers: errorHeaders(),
    content: errorContent,
  },
  HeadersTooLarge: {
    description: "`headers_too_large`: too many header fields, or too many bytes of them.",
    headers: errorHeaders(),
    content: errorContent,
  },
  InternalError: {
    description: "`internal_error`, or a service's unexpected failure.",
    headers: { "Cache-Control": header("NoStore") },
    content: errorContent,
  },
  BadGateway: {
    description: "`upstream_error`: a service behind the gateway failed.",
    headers: { "X-Request-Id": header("RequestId"), "Cache-Control": header("NoStore") },
    content: errorContent,
  },
  Unavailable: {
    description: "`overloaded` (the gateway is at its bound of requests in flight) or " +
      "`service_unavailable` (a service behind it is away).",
    headers: {
      "X-Request-Id": header("RequestId"),
      "Cache-Control": header("NoStore"),
      "Retry-After": header("RetryAfter"),
    },
    content: errorContent,
  },
  GatewayTimeout: {
    description: "`upstream_timeout`: a service behind the gateway did not answer in time.",
    headers: { "X-Request-Id": header("RequestId"), "Cache-Control": header("NoStore") },
    content: errorContent,
  },
};

// A method the route does not answer, with the route's CORS headers; Allow lists the methods it does.
const notAllowed = (cors?: "any" | "echo") => ({
  description: "`method_not_allowed`.",
  headers: { ...errorHeaders(cors), Allow: header("Allow") },
  content: errorContent,
});
SHARED_RESPONSES.MethodNotAllowed = notAllowed();
SHARED_RESPONSES.MethodNotAllowedAnyOrigin = notAllowed("any");
SHARED_RESPONSES.MethodNotAllowedEchoedOrigin = notAllowed("echo");

/** The refusals any route can give, whatever its own checks. */
const always = () => ({
  "414": response("UrlTooLong"),
  "431": response("HeadersTooLarge"),
  "500": response("InternalError"),
  "503": response("Unavailable"),
});
const upstream = () => ({ "502": response("BadGateway"), "504": response("GatewayTimeout") });

function refusal(description: string, cors?: "any" | "echo", extra: Json = {}): Json {
  return {
    description,
    headers: { ...errorHeaders(cors), ...extra },
    content: errorContent,
  };
}

function refusedMethod(
  allow: string,
  cors: "any" | "echo" | undefined,
  summary: string,
  tag: string,
): Json {
  return {
    tags: [tag],
    summary,
    description: `The route answers only ${allow}: any other method is refused.`,
    security: [],
    responses: {
      "405": response(
        cors === "any"
          ? "MethodNotAllowedAnyOrigin"
          : cors === "echo"
          ? "MethodNotAllowedEchoedOrigin"
          : "MethodNotAllowed",
      ),
      ...always(),
    },
  };
}

// ------------------------------------------------------------------- paths

const CONTENT_TAG = "content";
const CONTENT_SECURITY = [{ siteKey: [] }, { siteKeyQuery: [] }];

const LANG_PARAMETER = {
  name: "lang",
  in: "query",
  description: "Language codes (a comma-separated list, or the parameter repeated); " +
    "all active languages when absent. At most 50.",
  required: false,
  style: "form",
  explode: true,
  schema: { type: "array", items: { type: "string" } },
};
const KEY_PARAMETER = {
  name: "key",
  in: "query",
  description:
    "The site key, for clients that cannot set headers; `x-crm-key` is the documented form.",
  required: false,
  schema: { type: "string" },
};
const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  description: "ETags held; a match (of any content coding's tag) answers 304.",
  required: false,
  schema: { type: "string" },
};
const markerParameter = (what: string) => ({
  name: "marker",
  in: "path",
  required: true,
  description:
    `The ${what}'s marker: \`^[A-Za-z0-9_]{2,40}$\` (anything else is 400 invalid_marker).`,
  schema: { type: "string" },
});

interface ContentRoute {
  path: string;
  id: string;
  summary: string;
  schema: string;
  /** The path's parameter, shared by every method. */
  pathParameter?: Json;
  parameters: Json[];
  /** The 400 reasons of the route, or none. */
  invalid?: string;
  notFound?: string;
}

const CONTENT_ROUTES: ContentRoute[] = [
  {
    path: "/content/v1/pages/{marker}",
    id: "Page",
    summary: "A page with its sections and their blocks",
    schema: "Page",
    pathParameter: markerParameter("page"),
    parameters: [LANG_PARAMETER, {
      name: "empty",
      in: "query",
      required: false,
      description: "`false` or `0` leaves out blocks with nothing in the requested languages.",
      schema: { type: "string" },
    }],
    invalid: "`invalid_marker`, `invalid_lang`, `unknown_lang`, `too_many_langs`.",
    notFound: "`page_not_found`.",
  },
  {
    path: "/content/v1/sections/{marker}",
    id: "Section",
    summary: "A section with its blocks",
    schema: "Section",
    pathParameter: markerParameter("section"),
    parameters: [LANG_PARAMETER, {
      name: "empty",
      in: "query",
      required: false,
      description: "`false` or `0` leaves out blocks with nothing in the requested languages.",
      schema: { type: "string" },
    }],
    invalid: "`invalid_marker`, `invalid_lang`, `unknown_lang`, `too_many_langs`.",
    notFound: "`section_not_found`.",
  },
  {
    path: "/content/v1/blocks/{marker}",
    id: "Block",
    summary: "One block",
    schema: "Block",
    pathParameter: markerParameter("block"),
    parameters: [{
      name: "section",
      in: "query",
      required: false,
      description:
        "The marker of the block's section; without it, the oldest block of that marker.",
      schema: { type: "string" },
    }, LANG_PARAMETER],
    invalid: "`invalid_marker`, `invalid_lang`, `unknown_lang`, `too_many_langs`.",
    notFound: "`block_not_found`.",
  },
  {
    path: "/content/v1/blog",
    id: "Blog",
    summary: "A window of the blog's published posts",
    schema: "BlogWindow",
    parameters: [
      LANG_PARAMETER,
      ...["limit", "offset", "page", "perPage"].map((name) => ({
        name,
        in: "query",
        required: false,
        description: "Out-of-range values fall back to the defaults.",
        schema: { type: "integer" },
      })),
    ],
    invalid: "`invalid_lang`, `unknown_lang`, `too_many_langs`.",
  },
  {
    path: "/content/v1/blog/{slug}",
    id: "Post",
    summary: "One published post",
    schema: "PostAnswer",
    pathParameter: {
      name: "slug",
      in: "path",
      required: true,
      description: "Lowercase letters, digits and hyphens, up to 120 characters.",
      schema: { type: "string" },
    },
    parameters: [LANG_PARAMETER],
    invalid: "`invalid_lang`, `unknown_lang`, `too_many_langs`.",
    notFound: "`post_not_found` (absent, draft, scheduled, or an invalid slug).",
  },
  {
    path: "/content/v1/langs",
    id: "Languages",
    summary: "The site's active languages",
    schema: "Languages",
    parameters: [],
  },
];

function contentRead(route: ContentRoute, method: "get" | "head"): Json {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": header("ContentCacheControl"),
    Vary: header("Vary"),
    "Content-Encoding": header("ContentEncoding"),
    "Access-Control-Allow-Origin": header("AnyOrigin"),
    "Access-Control-Expose-Headers": header("ExposeHeaders"),
  };
  const ok: Json = { description: "The answer.", headers: okHeaders };
  // A HEAD answer has the GET answer's headers and no body.
  if (method === "get") ok.content = json(ref(route.schema));
  return {
    tags: [CONTENT_TAG],
    operationId: `${method}${route.id}`,
    summary: method === "get" ? route.summary : `${route.summary} (headers only)`,
    security: CONTENT_SECURITY,
    parameters: [...route.parameters, KEY_PARAMETER, IF_NONE_MATCH],
    responses: {
      "200": ok,
      "304": {
        description: "Not modified: If-None-Match holds this answer's ETag (of any coding).",
        headers: {
          "X-Request-Id": header("RequestId"),
          ETag: header("ETag"),
          "Cache-Control": header("ContentCacheControl"),
          Vary: header("Vary"),
          "Access-Control-Allow-Origin": header("AnyOrigin"),
          "Access-Control-Expose-Headers": header("ExposeHeaders"),
        },
      },
      ...(route.invalid ? { "400": refusal(route.invalid, "any") } : {}),
      "401": refusal("`invalid_key`: missing, malformed or revoked site key.", "any"),
      ...(route.notFound ? { "404": refusal(route.notFound, "any") } : {}),
      "429": refusal(
        "`rate_limit_exceeded`: per IP, per key, or after too many invalid keys.",
        "any",
      ),
      ...always(),
      ...upstream(),
    },
  };
}

const contentPreflight = (route: ContentRoute): Json => ({
  tags: [CONTENT_TAG],
  operationId: `preflight${route.id}`,
  summary: "CORS preflight",
  description: "Answered for any origin (and for any path under /content/).",
  security: [],
  responses: {
    "204": {
      description: "Allowed: GET and OPTIONS with x-crm-key, content-type and if-none-match.",
      headers: {
        "X-Request-Id": header("RequestId"),
        "Access-Control-Allow-Origin": header("AnyOrigin"),
        "Access-Control-Allow-Methods": header("AllowMethods"),
        "Access-Control-Allow-Headers": header("AllowHeaders"),
        "Access-Control-Max-Age": header("MaxAge"),
      },
    },
    ...always(),
  },
});

type PathItem = Partial<Record<Method, Json>> & { parameters?: Json[] };

/** Adds the 405 operations for the methods a path item does not answer. */
function withRefusedMethods(
  item: PathItem,
  allow: string,
  cors: "any" | "echo" | undefined,
  tag: string,
  id: string,
): PathItem {
  for (const method of METHODS) {
    if (!item[method]) {
      item[method] = {
        operationId: `${method}${id}Refused`,
        ...refusedMethod(allow, cors, `${method.toUpperCase()} is not allowed`, tag),
      };
    }
  }
  return item;
}

const paths: Record<string, PathItem> = {};

for (const route of CONTENT_ROUTES) {
  paths[route.path] = withRefusedMethods(
    {
      ...(route.pathParameter ? { parameters: [route.pathParameter] } : {}),
      get: contentRead(route, "get"),
      head: contentRead(route, "head"),
      options: contentPreflight(route),
    },
    "GET, HEAD, OPTIONS",
    "any",
    CONTENT_TAG,
    route.id,
  );
}

// Marketing ------------------------------------------------------------

const MARKETING_TAG = "marketing";
const BEACON_BODY = (schema: string, description: string) => ({
  required: true,
  description:
    `${description} JSON, sent as text/plain (a beacon) or application/json; 8 KB at most.`,
  content: {
    "text/plain": {
      schema: { type: "string", contentMediaType: "application/json", contentSchema: ref(schema) },
    },
    "application/json": { schema: ref(schema) },
  },
});

const BROWSER_PARAMS = [{
  name: "Origin",
  in: "header",
  required: false,
  description: "The page's origin: it names the site (else the Referer's origin).",
  schema: { type: "string" },
}];

const accepted = {
  description: "Stored (or an undeclared event name, dropped silently).",
  headers: {
    "X-Request-Id": header("RequestId"),
    "Access-Control-Allow-Origin": header("EchoedOrigin"),
    "Access-Control-Expose-Headers": header("ExposeHeaders"),
  },
};

function browserCollect(id: string, summary: string, schema: string, what: string): Json {
  return {
    tags: [MARKETING_TAG],
    operationId: id,
    summary,
    security: [],
    parameters: BROWSER_PARAMS,
    requestBody: BEACON_BODY(schema, what),
    responses: {
      "204": accepted,
      "400": refusal(
        "`unknown_domain` (the Origin is no site's domain) or `invalid_body`.",
        "echo",
      ),
      "408": refusal("`request_timeout`: the body did not arrive in time.", "echo"),
      "413": refusal("`payload_too_large`: over 8 KB.", "echo"),
      "429": refusal("`rate_limit_exceeded`: per IP or per site.", "echo"),
      ...always(),
      ...upstream(),
    },
  };
}

const marketingPreflight = (id: string): Json => ({
  tags: [MARKETING_TAG],
  operationId: id,
  summary: "CORS preflight",
  description: "The request's Origin is echoed.",
  security: [],
  responses: {
    "204": {
      description: "Allowed: POST with content-type.",
      headers: {
        "X-Request-Id": header("RequestId"),
        "Access-Control-Allow-Origin": header("EchoedOrigin"),
        "Access-Control-Allow-Methods": header("AllowMethods"),
        "Access-Control-Allow-Headers": header("AllowHeaders"),
        "Access-Control-Max-Age": header("MaxAge"),
      },
    },
    ...always(),
  },
});

const serverRefusals = (cors?: "echo") => ({
  "400": refusal(
    "`invalid_body` (not a JSON object, not application/json, or a field breaks its rule: " +
      "`field` and `problem` say which), `invalid_event_name`, `unknown_event` (with `name`).",
    cors,
  ),
  "401": refusal("`invalid_key`: missing, malformed or revoked secret key.", cors),
  "408": refusal("`request_timeout`: the body did not arrive in time.", cors),
  "413": refusal("`payload_too_large`: over 8 KB.", cors),
  "429": refusal("`rate_limit_exceeded`: per IP or per site.", cors),
  ...always(),
  ...upstream(),
});

const jsonAnswer = (schema: string, description: string, extra: Json = {}) => ({
  description,
  headers: {
    "X-Request-Id": header("RequestId"),
    "Cache-Control": header("NoStore"),
    ...extra,
  },
  content: json(ref(schema)),
});

paths["/marketing/event"] = withRefusedMethods(
  {
    post: {
      tags: [MARKETING_TAG],
      operationId: "postServerEvent",
      summary: "A custom event from a server",
      security: [{ secretKey: [] }],
      requestBody: {
        required: true,
        description: "8 KB at most.",
        content: json(ref("ServerEvent")),
      },
      responses: {
        "200": jsonAnswer("EventAccepted", "Accepted; `duplicate` for a repeated event id."),
        ...serverRefusals(),
      },
    },
  },
  "POST",
  undefined,
  MARKETING_TAG,
  "ServerEvent",
);

paths["/marketing/view"] = withRefusedMethods(
  {
    post: browserCollect("postPageView", "A page view from a page", "PageView", "A page view:"),
    options: marketingPreflight("preflightPageView"),
  },
  "POST, OPTIONS",
  "echo",
  MARKETING_TAG,
  "PageView",
);

paths["/marketing/act"] = withRefusedMethods(
  {
    post: browserCollect(
      "postBrowserEvent",
      "A custom event from a page",
      "BrowserEvent",
      "A custom event:",
    ),
    options: marketingPreflight("preflightBrowserEvent"),
  },
  "POST, OPTIONS",
  "echo",
  MARKETING_TAG,
  "BrowserEvent",
);

const leadBrowser = browserCollect(
  "postLead",
  "A lead, from a page or a server",
  "Lead",
  "A lead:",
);

paths["/marketing/lead"] = withRefusedMethods(
  {
    post: {
      ...leadBrowser,
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
        ...serverRefusals("echo"),
        "400": refusal(
          "`unknown_domain` (from a page whose Origin is no site's domain), `invalid_body`.",
          "echo",
        ),
      },
    },
    options: marketingPreflight("preflightLead"),
  },
  "POST, OPTIONS",
  "echo",
  MARKETING_TAG,
  "Lead",
);
// Reports --------------------------------------------------------------

const STATS_TAG = "reports";
const statsHeaders = {
  "X-Request-Id": header("RequestId"),
  "Cache-Control": header("NoStore"),
  Vary: header("Vary"),
  "Content-Encoding": header("ContentEncoding"),
  "Access-Control-Allow-Origin": header("AnyOrigin"),
  "Access-Control-Expose-Headers": header("ExposeHeaders"),
};
const statsVary = { ...HEADERS.Vary, required: false };

function statsOperation(id: string, summary: string, answer: string, body?: string): Json {
  const op: Json = {
    tags: [STATS_TAG],
    operationId: id,
    summary,
    security: [{ reportKey: [] }],
    responses: {
      "200": {
        description: "The answer.",
        headers: { ...statsHeaders, Vary: statsVary },
        content: json(ref(answer)),
      },
      ...(body
        ? {
          "400": refusal(
            "`invalid_body` (not a JSON object) or `invalid_query` (`field` names the body " +
              "field at fault, `problem` what is wrong).",
            "any",
          ),
        }
        : {}),
      "401": refusal("`invalid_key`: missing, malformed, unknown or revoked report key.", "any"),
      ...(body
        ? {
          "408": refusal("`request_timeout`: the body did not arrive in time.", "any"),
          "413": refusal("`payload_too_large`: over 16 KB.", "any"),
        }
        : {}),
      "429": refusal("`rate_limit_exceeded`: 600 a minute per report key.", "any"),
      ...always(),
      ...upstream(),
    },
  };
  if (body) {
    op.requestBody = { required: true, description: "16 KB at most.", content: json(ref(body)) };
  }
  return op;
}

const statsPreflight = (id: string, method: string): Json => ({
  tags: [STATS_TAG],
  operationId: id,
  summary: "CORS preflight",
  security: [],
  responses: {
    "204": {
      description: `Allowed: ${method} with x-report-key and content-type, from any origin.`,
      headers: {
        "X-Request-Id": header("RequestId"),
        "Access-Control-Allow-Origin": header("AnyOrigin"),
        "Access-Control-Allow-Methods": header("AllowMethods"),
        "Access-Control-Allow-Headers": header("AllowHeaders"),
        "Access-Control-Max-Age": header("MaxAge"),
      },
    },
    ...always(),
  },
});

paths["/stats/v1/query"] = withRefusedMethods(
  {
    post: statsOperation("postQuery", "A reports query", "QueryAnswer", "Query"),
    options: statsPreflight("preflightQuery", "POST"),
  },
  "POST, OPTIONS",
  "any",
  STATS_TAG,
  "Query",
);
paths["/stats/v1/funnel"] = withRefusedMethods(
  {
    post: statsOperation("postFunnel", "A funnel", "FunnelAnswer", "Funnel"),
    options: statsPreflight("preflightFunnel", "POST"),
  },
  "POST, OPTIONS",
  "any",
  STATS_TAG,
  "Funnel",
);
paths["/stats/v1/site"] = withRefusedMethods(
  {
    get: statsOperation("getSite", "The site's time zone and declared event types", "Site"),
    options: statsPreflight("preflightSite", "GET"),
  },
  "GET, OPTIONS",
  "any",
  STATS_TAG,
  "Site",
);

// Health ---------------------------------------------------------------

const HEALTH_TAG = "health";
const probe = (id: string, summary: string, description: string, responses: Json): Json => ({
  tags: [HEALTH_TAG],
  operationId: id,
  summary,
  description,
  security: [],
  responses: { ...responses, "414": response("UrlTooLong"), "431": response("HeadersTooLarge") },
});
const healthAnswer = (description: string) => jsonAnswer("Health", description);
const HEALTHZ_TEXT = "Readiness: 503 until every service behind the gateway has answered its " +
  "health check SERVING once; then 200 while the gateway can serve, `degraded` while a " +
  "backend is not serving. Never refused for load or rate.";
/** A probe answers every method as it answers GET: a prober may send any. */
function anyMethod(item: PathItem): PathItem {
  for (const method of METHODS) {
    if (!item[method]) {
      item[method] = { ...item.get, operationId: `${item.get!.operationId}By${method}` };
    }
  }
  return item;
}
paths["/healthz"] = anyMethod({
  get: probe("getHealth", "Readiness", HEALTHZ_TEXT, {
    "200": healthAnswer("Ready: `ok` or `degraded`."),
    "503": healthAnswer("Not ready (`unavailable`, `stopping`)."),
  }),
  head: probe("headHealth", "Readiness (headers only)", HEALTHZ_TEXT, {
    "200": { description: "Ready.", headers: { "X-Request-Id": header("RequestId") } },
    "503": { description: "Not ready.", headers: { "X-Request-Id": header("RequestId") } },
  }),
});
paths["/livez"] = anyMethod({
  get: probe("getLive", "Liveness", "200 while the process runs.", {
    "200": jsonAnswer("Live", "Alive."),
  }),
  head: probe("headLive", "Liveness (headers only)", "200 while the process runs.", {
    "200": { description: "Alive.", headers: { "X-Request-Id": header("RequestId") } },
  }),
});

// Documents and assets -------------------------------------------------

const ASSET_TAG = "assets";
const assetRead = (
  id: string,
  summary: string,
  type: string,
  method: "get" | "head",
  cacheControl: string,
): Json => {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": { required: true, schema: { type: "string", const: cacheControl } },
    Vary: header("Vary"),
    "Content-Encoding": { schema: { type: "string", const: "gzip" } },
  };
  const ok: Json = { description: "The file.", headers: okHeaders };
  if (method === "get") ok.content = { [type]: { schema: { type: "string" } } };
  return {
    tags: [ASSET_TAG],
    operationId: `${method}${id}`,
    summary,
    security: [],
    parameters: [IF_NONE_MATCH],
    responses: {
      "200": ok,
      "304": { description: "Not modified.", headers: okHeaders },
      ...always(),
    },
  };
};

function asset(path: string, id: string, summary: string, type: string, cacheControl: string) {
  paths[path] = withRefusedMethods(
    {
      get: assetRead(id, summary, type, "get", cacheControl),
      head: assetRead(id, summary, type, "head", cacheControl),
    },
    "GET, HEAD",
    undefined,
    ASSET_TAG,
    id,
  );
}

asset(
  "/widget.js",
  "Widget",
  "The collection script for sites",
  "application/javascript",
  "public, max-age=3600, stale-while-revalidate=86400",
);
asset(
  "/dashboard/dashboard.js",
  "DashboardScript",
  "The reports page's script",
  "application/javascript",
  "no-cache",
);
asset(
  "/dashboard/dashboard.css",
  "DashboardStyle",
  "The reports page's stylesheet",
  "text/css",
  "no-cache",
);

const dashboardPage = (method: "get" | "head"): Json => ({
  tags: [ASSET_TAG],
  operationId: `${method}Dashboard`,
  summary: "The reports page for people (signs in with a report key)",
  security: [],
  responses: {
    "200": {
      description: "The page.",
      headers: { "X-Request-Id": header("RequestId") },
      ...(method === "get" ? { content: { "text/html": { schema: { type: "string" } } } } : {}),
    },
    ...always(),
  },
});
paths["/dashboard/"] = withRefusedMethods(
  { get: dashboardPage("get"), head: dashboardPage("head") },
  "GET, HEAD",
  undefined,
  ASSET_TAG,
  "Dashboard",
);
paths["/dashboard"] = {
  get: {
    tags: [ASSET_TAG],
    operationId: "redirectDashboard",
    summary: "Redirects to /dashboard/",
    security: [],
    responses: {
      "308": {
        description: "To /dashboard/.",
        headers: { Location: header("Location"), "X-Request-Id": header("RequestId") },
      },
      ...always(),
    },
  },
};

const documentRead = (method: "get" | "head"): Json => {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": { required: true, schema: { type: "string" } },
    Vary: header("Vary"),
    "Content-Encoding": header("ContentEncoding"),
    "Access-Control-Allow-Origin": header("AnyOrigin"),
    "Access-Control-Expose-Headers": header("ExposeHeaders"),
  };
  return {
    tags: [ASSET_TAG],
    operationId: `${method}OpenApi`,
    summary: "This document",
    security: [],
    parameters: [IF_NONE_MATCH],
    responses: {
      "200": {
        description: "The OpenAPI document.",
        headers: okHeaders,
        ...(method === "get" ? { content: json(ref("OpenApiDocument")) } : {}),
      },
      "304": { description: "Not modified.", headers: okHeaders },
      ...always(),
    },
  };
};
paths["/openapi.json"] = withRefusedMethods(
  { get: documentRead("get"), head: documentRead("head") },
  "GET, HEAD",
  "any",
  ASSET_TAG,
  "OpenApi",
);

// ----------------------------------------------------------------- document

export const OPENAPI_DOCUMENT = {
  openapi: "3.1.1",
  info: {
    title: "CRM gateway",
    version: "1.0.0",
    summary: "Content, analytics collection, reports and health of the CRM's public gateway.",
    description: "Every public route of the gateway. Every JSON body has a schema, errors " +
      'included: an error is `{"message": REASON, ...}` with `Cache-Control: no-store`. ' +
      "JSON answers of 1 KB or more are compressed (`br`, else `gzip`) when Accept-Encoding " +
      "allows, with `Vary: Accept-Encoding`; every encoding of an answer has its own strong " +
      "ETag, and If-None-Match with any of them answers 304. A path that names no route " +
      'answers 404 `{"message": "Cannot GET /path", "error": "Not Found", ' +
      '"statusCode": 404}`. Every answer carries X-Request-Id.',
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
  },
  servers: [{ url: "http://127.0.0.1:8080", description: "`deno task start`" }],
  tags: [
    { name: CONTENT_TAG, description: "The read-only content API, by site key." },
    { name: MARKETING_TAG, description: "Page views, custom events and leads." },
    { name: STATS_TAG, description: "Reports and funnels, by report key." },
    { name: HEALTH_TAG, description: "Probes for load balancers and orchestrators." },
    { name: ASSET_TAG, description: "Scripts, pages and this document." },
  ],
  paths,
  components: {
    schemas: SCHEMAS,
    headers: HEADERS,
    responses: SHARED_RESPONSES,
    securitySchemes: {
      siteKey: {
        type: "apiKey",
        in: "header",
        name: "x-crm-key",
        description: "A site key: `pk_` and 32 lowercase hex characters.",
      },
      siteKeyQuery: {
        type: "apiKey",
        in: "query",
        name: "key",
        description: "The site key as a query parameter, for clients that cannot set headers.",
      },
      secretKey: {
        type: "apiKey",
        in: "header",
        name: "x-event-key",
        description: "A secret key: `sk_` and 48 hex characters.",
      },
      reportKey: {
        type: "apiKey",
        in: "header",
        name: "x-report-key",
        description: "A report key: `rk_` and 48 lowercase hex characters.",
      },
    },
  },
} as const;
