/**
 * GET /dashboard/: the reports page for people. The page is a static shell;
 * its script (dashboard/src, built into dashboard/dist) draws everything,
 * signs in with a report key and reads the /stats/v1/ routes from this same
 * origin. The view lives in the query string, so any query string gets the
 * same page. A strict Content-Security-Policy allows nothing from anywhere
 * else, and no inline script or style.
 */
import { assetHandler, staticAsset } from "./static_asset.ts";
import type { Handler } from "./http.ts";
import { jsonError } from "./http.ts";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reports</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/dashboard.css">
<script defer src="/dashboard/dashboard.js"></script>
</head>
<body>
<div id="root"></div>
<noscript>The reports page needs JavaScript.</noscript>
</body>
</html>
`;

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-cache",
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; " +
    "img-src 'self' data: blob:; connect-src 'self'; form-action 'none'; base-uri 'none'; " +
    "frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** The built script and stylesheet; `deno task dashboard` makes them. */
export async function dashboardApp(script: Uint8Array, style: Uint8Array): Promise<Handler> {
  const assets: Record<string, Handler> = {
    "/dashboard/dashboard.js": assetHandler(
      await staticAsset(script, "application/javascript; charset=utf-8"),
      "no-cache",
    ),
    "/dashboard/dashboard.css": assetHandler(
      await staticAsset(style, "text/css; charset=utf-8"),
      "no-cache",
    ),
  };
  return (ctx) => {
    const path = ctx.url.pathname;
    if (path === "/dashboard") {
      return new Response(null, { status: 308, headers: { location: "/dashboard/" } });
    }
    const asset = assets[path];
    if (asset) {
      ctx.route = path;
      return asset(ctx);
    }
    if (path !== "/dashboard/") {
      return jsonError(404, {
        message: `Cannot ${ctx.request.method} ${path}`,
        error: "Not Found",
        statusCode: 404,
      });
    }
    ctx.route = "/dashboard/";
    if (ctx.request.method !== "GET" && ctx.request.method !== "HEAD") {
      return jsonError(405, { message: "method_not_allowed" }, { allow: "GET, HEAD" });
    }
    return new Response(ctx.request.method === "HEAD" ? null : PAGE, {
      status: 200,
      headers: PAGE_HEADERS,
    });
  };
}
