/**
 * CORS of the content API, exactly as specified: any origin; methods GET and
 * OPTIONS; request headers x-crm-key, content-type and if-none-match. Any
 * other custom header is refused by the browser at preflight.
 */
/**
 * The response headers a browser script may read beyond the CORS-safelisted
 * ones: the ETag (for its own If-None-Match), the request id (to quote in a
 * report of a problem) and Retry-After (when to try again after a 503).
 */
export const EXPOSED_HEADERS = "ETag, X-Request-Id, Retry-After";

export const CONTENT_CORS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS,
};

export function contentPreflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CONTENT_CORS,
      "access-control-allow-methods": "GET, OPTIONS",
      "access-control-allow-headers": "x-crm-key, content-type, if-none-match",
      "access-control-max-age": "86400",
    },
  });
}

/** Adds the CORS headers to a response (errors and 429s included). */
export function withCors(response: Response, cors: Readonly<Record<string, string>>): Response {
  for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
  return response;
}

/**
 * CORS of the browser collection routes (/marketing/view, /act, /lead): the
 * page's Origin is echoed (the site is recognised by it), so both
 * sendBeacon and fetch(..., { keepalive: true }) work; no credentials.
 */
export function marketingCors(origin: string | null): Record<string, string> {
  return {
    "access-control-allow-origin": origin || "*",
    "access-control-expose-headers": EXPOSED_HEADERS,
    "vary": "Origin",
  };
}

export function marketingPreflight(origin: string | null): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...marketingCors(origin),
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": "content-type",
      "access-control-max-age": "86400",
    },
  });
}
