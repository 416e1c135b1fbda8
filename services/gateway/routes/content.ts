/**
 * The content API's routes (content-api.md): GET and HEAD of each read, by
 * site key, any origin, answers shared caches may keep while they are right.
 */
import { CONTENT_CORS_POLICY } from "../cors.ts";
import {
  always,
  cacheHeader,
  corsAnswerHeaders,
  header,
  IF_NONE_MATCH,
  type Json,
  json,
  ref,
  refusal,
  upstream,
} from "../openapi/components.ts";
import {
  type CachePolicy,
  type Method,
  type MethodRoute,
  type RouteEntry,
  SHARED_CACHE,
} from "./table.ts";

export const CONTENT_TAG = "content";
const CONTENT_SECURITY = [{ siteKey: [] }, { siteKeyQuery: [] }];

/** The prefix of the content API: its CORS policy holds for any path under it (dispatch.ts). */
export const CONTENT_PREFIX = "/content";

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
const FALLBACK_PARAMETER = {
  name: "fallback",
  in: "query",
  description: "`true`: each language map gets, for each requested language it lacks, the " +
    "value of the first language along that language's chain in the site's fallbacks that " +
    "has one, under the requested code. Otherwise no server-side fallback.",
  required: false,
  schema: { type: "string" },
};
const KEY_PARAMETER = {
  name: "key",
  in: "query",
  description:
    "The site key, for clients that cannot set headers; `x-crm-key` is the documented form.",
  required: false,
  schema: { type: "string" },
};
const EMPTY_PARAMETER = {
  name: "empty",
  in: "query",
  required: false,
  description: "`false` or `0` leaves out blocks with nothing in the requested languages.",
  schema: { type: "string" },
};
const marker = (what: string) =>
  `The ${what}'s marker: \`^[A-Za-z0-9_]{2,40}$\` (anything else is 400 invalid_marker).`;
const LANG_REFUSALS = "`invalid_lang`, `unknown_lang`, `too_many_langs`.";

/** The content reads, each a handler of content_api.ts. */
export type ContentRead =
  | "page"
  | "section"
  | "block"
  | "blog"
  | "blogPost"
  | "langs"
  | "pages"
  | "sections"
  | "changes";

interface ContentRoute {
  path: string;
  handler: ContentRead;
  name: string;
  summary: string;
  answer: string;
  params?: Record<string, string>;
  parameters: Json[];
  /** The 400 reasons of the route, or none. */
  invalid?: string;
  notFound?: string;
}

function contentRead(route: ContentRoute, method: "get" | "head", cache: CachePolicy): Json {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": cacheHeader(cache),
    "Surrogate-Key": header("CacheTags"),
    "Cache-Tag": header("CacheTags"),
    Vary: header("Vary"),
    "Content-Encoding": header("ContentEncoding"),
    ...corsAnswerHeaders(CONTENT_CORS_POLICY),
  };
  const ok: Json = { description: "The answer.", headers: okHeaders };
  // A HEAD answer has the GET answer's headers and no body.
  if (method === "get") ok.content = json(ref(route.answer));
  return {
    tags: [CONTENT_TAG],
    operationId: `${method}${route.name}`,
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
          "Cache-Control": cacheHeader(cache),
          "Surrogate-Key": header("CacheTags"),
          "Cache-Tag": header("CacheTags"),
          Vary: header("Vary"),
          ...corsAnswerHeaders(CONTENT_CORS_POLICY),
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

function contentRoute(route: ContentRoute): RouteEntry<ContentRead> {
  const methods: Partial<Record<Method, MethodRoute<ContentRead>>> = {};
  for (const method of ["get", "head"] as const) {
    methods[method.toUpperCase() as Method] = {
      handler: route.handler,
      cache: SHARED_CACHE,
      ...(method === "get" ? { answer: route.answer } : {}),
      operation: contentRead(route, method, SHARED_CACHE),
    };
  }
  return {
    path: route.path,
    name: route.name,
    tag: CONTENT_TAG,
    cors: CONTENT_CORS_POLICY,
    ...(route.params ? { params: route.params } : {}),
    methods,
  };
}

export const CONTENT_ROUTES: readonly RouteEntry<ContentRead>[] = [
  contentRoute({
    path: "/content/v1/pages",
    handler: "pages",
    name: "PageIndex",
    summary: "Every page of the site, in manifest order, with when it last changed",
    answer: "PageIndex",
    parameters: [],
  }),
  contentRoute({
    path: "/content/v1/sections",
    handler: "sections",
    name: "SectionIndex",
    summary: "Every section of the site, in manifest order, with its page and when it last changed",
    answer: "SectionIndex",
    parameters: [],
  }),
  contentRoute({
    path: "/content/v1/changes",
    handler: "changes",
    name: "Changes",
    summary: "Everything the API answers, or what changed since an earlier answer's cursor",
    answer: "Changes",
    parameters: [{
      name: "since",
      in: "query",
      required: false,
      description: "The cursor of an earlier answer: the answer then names what changed since " +
        "(full false). Without it, everything the API answers now (full true).",
      schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,200}$" },
    }],
    invalid: "`invalid_cursor`: a cursor this site did not give out.",
  }),
  contentRoute({
    path: "/content/v1/pages/:marker",
    handler: "page",
    name: "Page",
    summary: "A page with its sections and their blocks",
    answer: "Page",
    params: { marker: marker("page") },
    parameters: [LANG_PARAMETER, FALLBACK_PARAMETER, EMPTY_PARAMETER],
    invalid: "`invalid_marker`, " + LANG_REFUSALS,
    notFound: "`page_not_found`.",
  }),
  contentRoute({
    path: "/content/v1/sections/:marker",
    handler: "section",
    name: "Section",
    summary: "A section with its blocks",
    answer: "Section",
    params: { marker: marker("section") },
    parameters: [LANG_PARAMETER, FALLBACK_PARAMETER, EMPTY_PARAMETER],
    invalid: "`invalid_marker`, " + LANG_REFUSALS,
    notFound: "`section_not_found`.",
  }),
  contentRoute({
    path: "/content/v1/blocks/:marker",
    handler: "block",
    name: "Block",
    summary: "One block",
    answer: "Block",
    params: { marker: marker("block") },
    parameters: [
      {
        name: "section",
        in: "query",
        required: false,
        description:
          "The marker of the block's section; without it, the oldest block of that marker.",
        schema: { type: "string" },
      },
      LANG_PARAMETER,
      FALLBACK_PARAMETER,
    ],
    invalid: "`invalid_marker`, " + LANG_REFUSALS,
    notFound: "`block_not_found`.",
  }),
  contentRoute({
    path: "/content/v1/blog",
    handler: "blog",
    name: "Blog",
    summary: "A window of the blog's published posts",
    answer: "BlogWindow",
    parameters: [
      LANG_PARAMETER,
      FALLBACK_PARAMETER,
      ...["limit", "offset", "page", "perPage"].map((name) => ({
        name,
        in: "query",
        required: false,
        description: "Out-of-range values fall back to the defaults.",
        schema: { type: "integer" },
      })),
    ],
    invalid: LANG_REFUSALS,
  }),
  contentRoute({
    path: "/content/v1/blog/:slug",
    handler: "blogPost",
    name: "Post",
    summary: "One published post",
    answer: "PostAnswer",
    params: { slug: "Lowercase letters, digits and hyphens, up to 120 characters." },
    parameters: [LANG_PARAMETER, FALLBACK_PARAMETER],
    invalid: LANG_REFUSALS,
    notFound: "`post_not_found` (absent, draft, scheduled, or an invalid slug).",
  }),
  contentRoute({
    path: "/content/v1/langs",
    handler: "langs",
    name: "Languages",
    summary: "The site's active languages",
    answer: "Languages",
    parameters: [],
  }),
];
