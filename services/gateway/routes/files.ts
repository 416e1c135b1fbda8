/**
 * Files and pages: the widget script, the reports page and its files, this
 * API's OpenAPI document, and the demo site's page of `deno task start`.
 */
import { DOCUMENT_CORS_POLICY, FILE_CORS_POLICY } from "../cors.ts";
import {
  always,
  cacheHeader,
  corsAnswerHeaders,
  header,
  IF_NONE_MATCH,
  type Json,
  json,
  ref,
} from "../openapi/components.ts";
import {
  type CachePolicy,
  type MethodRoute,
  NO_CACHE,
  NO_CACHE_HEADER,
  NO_STORE,
  type RouteEntry,
} from "./table.ts";

const ASSET_TAG = "assets";

/** The files and pages, each a handler of static_asset.ts, dashboard.ts, openapi/serve.ts or demo_page.ts. */
export type File =
  | "widget"
  | "dashboardScript"
  | "dashboardStyle"
  | "dashboardPage"
  | "dashboardRedirect"
  | "openApi"
  | "sharePage"
  | "demo";

/**
 * Browsers revalidate the widget after an hour (a cheap 304 thanks to the
 * ETag) and may keep using the old copy for a day while they do, so a new
 * widget reaches every site within about an hour without a versioned URL.
 */
export const SCRIPT_CACHE: CachePolicy = {
  kind: "fixed",
  value: "public, max-age=3600, stale-while-revalidate=86400",
};

function fileRead(
  handler: File,
  id: string,
  summary: string,
  type: string,
  method: "get" | "head",
  cache: CachePolicy,
): MethodRoute<File> {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": cacheHeader(cache),
    Vary: header("Vary"),
    "Content-Encoding": header("ContentEncoding"),
    ...corsAnswerHeaders(FILE_CORS_POLICY),
  };
  const ok: Json = { description: "The file.", headers: okHeaders };
  if (method === "get") ok.content = { [type]: { schema: { type: "string" } } };
  return {
    handler,
    cache,
    operation: {
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
    },
  };
}

function file(
  path: string,
  handler: File,
  id: string,
  summary: string,
  type: string,
  cache: CachePolicy,
): RouteEntry<File> {
  return {
    path,
    name: id,
    tag: ASSET_TAG,
    cors: FILE_CORS_POLICY,
    exact: true,
    methods: {
      GET: fileRead(handler, id, summary, type, "get", cache),
      HEAD: fileRead(handler, id, summary, type, "head", cache),
    },
  };
}

function dashboardPage(method: "get" | "head"): MethodRoute<File> {
  return {
    handler: "dashboardPage",
    cache: NO_CACHE,
    operation: {
      tags: [ASSET_TAG],
      operationId: `${method}Dashboard`,
      summary: "The reports page for people (signs in with a report key)",
      security: [],
      responses: {
        "200": {
          description: "The page.",
          headers: { "X-Request-Id": header("RequestId"), "Cache-Control": cacheHeader(NO_CACHE) },
          ...(method === "get" ? { content: { "text/html": { schema: { type: "string" } } } } : {}),
        },
        ...always(),
      },
    },
  };
}

function sharePage(method: "get" | "head"): MethodRoute<File> {
  const html = method === "get" ? { content: { "text/html": { schema: { type: "string" } } } } : {};
  const headers = {
    "X-Request-Id": header("RequestId"),
    "Cache-Control": cacheHeader(NO_STORE),
    "Content-Security-Policy": {
      description: "`frame-ancestors` names the site's embedOrigins on an embedded page of a " +
        "live link, and is `'none'` on every other page.",
      schema: { type: "string" },
    },
  };
  return {
    handler: "sharePage",
    cache: NO_STORE,
    operation: {
      tags: [ASSET_TAG],
      operationId: `${method}SharePage`,
      summary: "A share link's page: the site's reports, read-only, without sign-in",
      description: "A link with a password shows a password form first; the page then reads " +
        "the reports with `x-share-link` (and `x-share-password`).",
      security: [],
      parameters: [{
        name: "embed",
        in: "query",
        required: false,
        description: "`true`: the page for an iframe, without sign-out and link controls; " +
          "only the site's embedOrigins may frame it.",
        schema: { type: "string", enum: ["true", "false"] },
      }],
      responses: {
        "200": { description: "The page.", headers, ...html },
        "404": {
          description: "A page saying the link no longer works (unknown, revoked or expired).",
          headers,
          ...html,
        },
        ...always(),
      },
    },
  };
}

function documentRead(method: "get" | "head"): MethodRoute<File> {
  const okHeaders = {
    "X-Request-Id": header("RequestId"),
    ETag: header("ETag"),
    "Cache-Control": cacheHeader(NO_CACHE),
    Vary: header("Vary"),
    "Content-Encoding": header("ContentEncoding"),
    ...corsAnswerHeaders(DOCUMENT_CORS_POLICY),
  };
  return {
    handler: "openApi",
    // Revalidated on every use: a new gateway version may change it, and a 304 is cheap.
    cache: NO_CACHE,
    ...(method === "get" ? { answer: "OpenApiDocument" } : {}),
    operation: {
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
    },
  };
}

export const OPENAPI_PATH = "/openapi.json";

export const FILE_ROUTES: readonly RouteEntry<File>[] = [
  file(
    "/widget.js",
    "widget",
    "Widget",
    "The collection script for sites",
    "application/javascript",
    SCRIPT_CACHE,
  ),
  file(
    "/dashboard/dashboard.js",
    "dashboardScript",
    "DashboardScript",
    "The reports page's script",
    "application/javascript",
    NO_CACHE,
  ),
  file(
    "/dashboard/dashboard.css",
    "dashboardStyle",
    "DashboardStyle",
    "The reports page's stylesheet",
    "text/css",
    NO_CACHE,
  ),
  {
    path: "/dashboard/",
    name: "Dashboard",
    tag: ASSET_TAG,
    exact: true,
    methods: { GET: dashboardPage("get"), HEAD: dashboardPage("head") },
  },
  {
    path: "/dashboard",
    name: "DashboardRedirect",
    tag: ASSET_TAG,
    exact: true,
    otherMethodsAs: "GET",
    methods: {
      GET: {
        handler: "dashboardRedirect",
        cache: NO_CACHE_HEADER,
        operation: {
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
      },
    },
  },
  {
    path: "/share/:id",
    name: "SharePage",
    tag: ASSET_TAG,
    params: { id: "The share link: `sh_` and 32 lowercase hex characters." },
    methods: { GET: sharePage("get"), HEAD: sharePage("head") },
  },
  {
    path: OPENAPI_PATH,
    name: "OpenApi",
    tag: ASSET_TAG,
    cors: DOCUMENT_CORS_POLICY,
    exact: true,
    methods: { GET: documentRead("get"), HEAD: documentRead("head") },
  },
  {
    path: "/demo/*",
    name: "Demo",
    tag: ASSET_TAG,
    undocumented: "the demo site's page of `deno task start`, a development aid",
    otherMethodsAs: "GET",
    methods: { GET: { handler: "demo", cache: NO_STORE, operation: {} } },
  },
];
