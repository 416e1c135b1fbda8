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
import { cacheControlOf } from "./routes/table.ts";

/** The page's shell: its script draws the rest; `head` and `root` add to it (already escaped). */
export function pageHtml({ head = "", root = "" }: { head?: string; root?: string } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reports</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/dashboard.css">
${head}<script defer src="/dashboard/dashboard.js"></script>
</head>
<body>
<div id="root">${root}</div>
<noscript>The reports page needs JavaScript.</noscript>
</body>
</html>
`;
}

const PAGE = pageHtml();

/**
 * The headers of every page of the dashboard. `frameAncestors` is who may
 * frame it: nobody, but for a share link's embedded page (the site's
 * embedOrigins).
 */
export function pageHeaders(frameAncestors: readonly string[] = []): Record<string, string> {
  const ancestors = frameAncestors.length ? frameAncestors.join(" ") : "'none'";
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; " +
      "img-src 'self' data: blob:; connect-src 'self'; form-action 'none'; base-uri 'none'; " +
      `frame-ancestors ${ancestors}`,
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    ...(frameAncestors.length ? {} : { "x-frame-options": "DENY" }),
  };
}

const PAGE_HEADERS = pageHeaders();

/** The reports page and its built script and stylesheet (`deno task dashboard` makes them). */
export function dashboardApp(
  script: Uint8Array,
  style: Uint8Array,
): Record<"dashboardPage" | "dashboardScript" | "dashboardStyle" | "dashboardRedirect", Handler> {
  return {
    dashboardScript: assetHandler(
      staticAsset(script, "application/javascript; charset=utf-8"),
    ),
    dashboardStyle: assetHandler(staticAsset(style, "text/css; charset=utf-8")),
    dashboardRedirect: () =>
      new Response(null, { status: 308, headers: { location: "/dashboard/" } }),
    dashboardPage: (ctx) =>
      new Response(ctx.request.method === "HEAD" ? null : PAGE, {
        status: 200,
        headers: { ...PAGE_HEADERS, "cache-control": cacheControlOf(ctx.match!.method.cache) },
      }),
  };
}
