/**
 * The parts of the OpenAPI document every area's routes share: the
 * reference helpers, the documented headers, the answers of the HTTP layer
 * (the same on every route), and the headers a route's CORS and cache
 * policies put on its answers.
 */
import type { CorsPolicy } from "../cors.ts";
import type { CachePolicy } from "../routes/table.ts";

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
export const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
export const json = (schema: Json) => ({ "application/json": { schema } });

/** The methods OpenAPI names that the gateway's routes answer or refuse. */
export const METHODS = ["get", "head", "post", "put", "patch", "delete", "options"] as const;

// ---------------------------------------------------------------- headers

export const HEADERS: Record<string, Json> = {
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
    description: "To a site key: browsers revalidate every time; shared caches keep the " +
      "answer while it is right, and may serve it a minute longer while they fetch it again, " +
      "a day longer while the origin fails. To a preview key: `private, no-store`.",
    required: true,
    schema: {
      type: "string",
      pattern: "^(public, max-age=0, s-maxage=\\d+, stale-while-revalidate=60, " +
        "stale-if-error=86400|private, no-store)$",
    },
  },
  CacheTags: {
    description: "What the answer holds, as a CDN purges it (Surrogate-Key and Cache-Tag carry " +
      "the same): `site:SITE_ID`, and `page:MARKER`, `section:MARKER`, `block:SECTION/BLOCK`, " +
      "`post:SLUG`, `blog`, `langs`, space-separated; the names content.published messages carry. " +
      "Absent on a preview key's answers.",
    schema: { type: "string", pattern: "^site:\\S+( \\S+)*$" },
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
    description: "Set when the body (a JSON body of 1 KB or more, any file) is compressed: " +
      "`br` preferred, or `gzip`, as Accept-Encoding allows.",
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
export const SHARED_RESPONSES: Record<string, Json> = {
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
export const always = () => ({
  "414": response("UrlTooLong"),
  "431": response("HeadersTooLarge"),
  "500": response("InternalError"),
  "503": response("Unavailable"),
});
export const upstream = () => ({
  "502": response("BadGateway"),
  "504": response("GatewayTimeout"),
});

export function refusal(description: string, cors?: "any" | "echo", extra: Json = {}): Json {
  return {
    description,
    headers: { ...errorHeaders(cors), ...extra },
    content: errorContent,
  };
}

export function refusedMethod(
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

export const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  description: "ETags held; a match (of any content coding's tag) answers 304.",
  required: false,
  schema: { type: "string" },
};

/** A JSON answer that is never stored. */
export const jsonAnswer = (schema: string, description: string, extra: Json = {}) => ({
  description,
  headers: {
    "X-Request-Id": header("RequestId"),
    "Cache-Control": header("NoStore"),
    ...extra,
  },
  content: json(ref(schema)),
});

/** How the document names a CORS policy's origin on refusals: `any`, `echo`, or none. */
export function refusalCors(policy: CorsPolicy | undefined): "any" | "echo" | undefined {
  return policy?.onRefusals ? policy.origin : undefined;
}

/** The CORS headers a policy puts on a route's answers. */
export function corsAnswerHeaders(policy: CorsPolicy | undefined): Json {
  if (!policy) return {};
  return {
    "Access-Control-Allow-Origin": header(policy.origin === "any" ? "AnyOrigin" : "EchoedOrigin"),
    ...(policy.exposes ? { "Access-Control-Expose-Headers": header("ExposeHeaders") } : {}),
  };
}

/** The Cache-Control header a cache policy puts on a route's answers. */
export function cacheHeader(policy: CachePolicy): Json {
  if (policy.kind === "shared") return header("ContentCacheControl");
  if (policy.kind === "none") throw new Error("a route without Cache-Control documents none");
  if (policy.value === "no-store") return header("NoStore");
  return { required: true, schema: { type: "string", const: policy.value } };
}
