/**
 * GET /dashboard/: the reports page for people. The page is static; its
 * script (dashboard/src, built into dashboard/dist) signs in with a report
 * key and reads POST /stats/v1/query from this same origin. A strict
 * Content-Security-Policy allows nothing from anywhere else.
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
<link rel="stylesheet" href="/dashboard/dashboard.css">
<script defer src="/dashboard/dashboard.js"></script>
</head>
<body>
<section id="signin">
  <h1>Reports</h1>
  <form id="signin-form" autocomplete="off">
    <label for="key">Report key</label>
    <input id="key" name="key" type="password" placeholder="rk_..." required spellcheck="false">
    <button type="submit">Sign in</button>
  </form>
  <p id="signin-error" role="alert"></p>
  <p>The key stays in this tab until you sign out or close it.</p>
</section>
<div id="app" hidden>
  <header>
    <h1>Reports</h1>
    <nav role="tablist">
      <button role="tab" type="button" data-report="traffic">Traffic</button>
      <button role="tab" type="button" data-report="events">Events</button>
      <button role="tab" type="button" data-report="ads">Ad channels</button>
    </nav>
    <label>Range
      <select id="range">
        <option value="today">Today</option>
        <option value="yesterday">Yesterday</option>
        <option value="7d">Last 7 days</option>
        <option value="30d" selected>Last 30 days</option>
        <option value="month">This month</option>
        <option value="year">This year</option>
        <option value="all">All time</option>
        <option value="custom">Custom…</option>
      </select>
    </label>
    <span id="custom" hidden>
      <input id="from" type="date" aria-label="first day"> to
      <input id="to" type="date" aria-label="last day">
    </span>
    <span id="zone" data-testid="zone"></span>
    <button id="signout" type="button">Sign out</button>
  </header>
  <main>
    <p id="status" role="status"></p>
    <div id="summary"></div>
    <div id="chart"></div>
    <label id="breakdown-choice">Breakdown
      <select id="breakdown">
        <option value="visit:channel">Channel</option>
        <option value="visit:source">Source</option>
        <option value="visit:utm_source">UTM source</option>
        <option value="visit:utm_medium">UTM medium</option>
        <option value="visit:utm_campaign">UTM campaign</option>
        <option value="visit:utm_term">UTM term</option>
        <option value="visit:utm_content">UTM content</option>
        <option value="visit:entry_page">Entry page</option>
        <option value="visit:country">Country</option>
        <option value="visit:device">Device</option>
        <option value="visit:browser">Browser</option>
      </select>
    </label>
    <div id="tables"></div>
  </main>
</div>
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
