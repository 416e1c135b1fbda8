/**
 * The CORS policies a route of the table (routes/table.ts) can have. The
 * dispatcher answers a route's preflight and puts the policy's headers on its
 * refusals; the route's handler puts them on its own answers (ctx.match.cors).
 */

/**
 * The response headers a browser script may read beyond the CORS-safelisted
 * ones: the ETag (for its own If-None-Match), the request id (to quote in a
 * report of a problem) and Retry-After (when to try again after a 503).
 */
export const EXPOSED_HEADERS = "ETag, X-Request-Id, Retry-After";

export interface CorsPolicy {
  /** `any`: `Access-Control-Allow-Origin: *`; `echo`: the request's Origin (`*` without one). */
  origin: "any" | "echo";
  /** Whether answers name EXPOSED_HEADERS. */
  exposes: boolean;
  /** Whether the route's refusals (errors, 405) carry the headers too, not only its answers. */
  onRefusals: boolean;
  /** The request headers a preflight allows; without it OPTIONS is refused like any other method. */
  preflight?: {
    allowHeaders: string;
    /** What the document says a preflight allows, given the methods it names. */
    describe(methods: readonly string[]): string;
    /** What the document adds about who is answered. */
    note?: string;
  };
}

/** The content API, exactly as specified: any origin; x-crm-key, content-type, if-none-match. */
export const CONTENT_CORS_POLICY: CorsPolicy = {
  origin: "any",
  exposes: true,
  onRefusals: true,
  preflight: {
    allowHeaders: "x-crm-key, content-type, if-none-match",
    describe: (methods) =>
      `Allowed: ${methods.join(" and ")} with x-crm-key, content-type and if-none-match.`,
    note: "Answered for any origin (and for any path under /content/).",
  },
};

/** The reports: any origin may ask (the key is the credential; no cookies are involved). */
export const STATS_CORS_POLICY: CorsPolicy = {
  origin: "any",
  exposes: true,
  onRefusals: true,
  preflight: {
    allowHeaders: "x-report-key, x-share-link, x-share-password, content-type",
    describe: (methods) =>
      `Allowed: ${
        methods.filter((m) => m !== "OPTIONS").join(", ")
      } with x-report-key (or x-share-link and x-share-password) and content-type, from any origin.`,
  },
};

/**
 * The browser collection routes (/marketing/view, /act, /lead): the page's
 * Origin is echoed (the site is recognised by it), so both sendBeacon and
 * fetch(..., { keepalive: true }) work; no credentials.
 */
export const BROWSER_CORS_POLICY: CorsPolicy = {
  origin: "echo",
  exposes: true,
  onRefusals: true,
  preflight: {
    allowHeaders: "content-type",
    describe: (methods) =>
      `Allowed: ${methods.filter((m) => m !== "OPTIONS").join(", ")} with content-type.`,
    note: "The request's Origin is echoed.",
  },
};

/** A document any API tool in a browser may read (no preflight: it needs none). */
export const DOCUMENT_CORS_POLICY: CorsPolicy = { origin: "any", exposes: true, onRefusals: true };

/** Files a page may load with `crossorigin` (for SRI): their answers allow any origin. */
export const FILE_CORS_POLICY: CorsPolicy = { origin: "any", exposes: false, onRefusals: false };

const ANY_ORIGIN: Readonly<Record<string, string>> = { "access-control-allow-origin": "*" };
const ANY_ORIGIN_EXPOSED: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS,
};
const NONE: Readonly<Record<string, string>> = {};

/** The headers a policy puts on an answer to a request from origin (shared: never change them). */
export function corsHeaders(
  policy: CorsPolicy | undefined,
  origin: string | null,
): Readonly<Record<string, string>> {
  if (!policy) return NONE;
  if (policy.origin === "any") return policy.exposes ? ANY_ORIGIN_EXPOSED : ANY_ORIGIN;
  return {
    "access-control-allow-origin": origin || "*",
    ...(policy.exposes ? { "access-control-expose-headers": EXPOSED_HEADERS } : {}),
    "vary": "Origin",
  };
}

/** The headers a policy puts on a refusal (none where only answers carry them). */
export function refusalCorsHeaders(
  policy: CorsPolicy | undefined,
  origin: string | null,
): Readonly<Record<string, string>> {
  return policy?.onRefusals ? corsHeaders(policy, origin) : NONE;
}

/** A preflight's answer: the methods a browser may use (OPTIONS included), the allowed headers. */
export function preflightAnswer(
  policy: CorsPolicy,
  origin: string | null,
  methods: string,
): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(policy, origin),
      "access-control-allow-methods": methods,
      "access-control-allow-headers": policy.preflight?.allowHeaders ?? "",
      "access-control-max-age": "86400",
    },
  });
}

/** Adds headers to a response (errors and 429s included). */
export function withCors(response: Response, cors: Readonly<Record<string, string>>): Response {
  for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
  return response;
}
