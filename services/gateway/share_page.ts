/**
 * GET /share/ID: a share link's page, the dashboard of the link's site,
 * read-only and without sign-in. The page tells its script the link (a meta
 * element; no inline script under the Content-Security-Policy), and its
 * script reads the stats API with x-share-link. A link with a password shows
 * a password form first (drawn here too, so it is there before the script
 * runs). `?embed=true` is the same page for an iframe, without sign-out and
 * link controls: only the site's embedOrigins may frame it (CSP
 * frame-ancestors); every other page of the dashboard may be framed by
 * nobody. An unknown, revoked or expired link gets a page saying the link
 * no longer works (404). Never stored: a revocation must show at once.
 */
import type { Handler } from "./http.ts";
import type { ShareCallers } from "./share_callers.ts";
import { pageHeaders, pageHtml } from "./dashboard.ts";

export interface SharePageOptions {
  shares: ShareCallers;
}

/** The link as the page's script reads it (meta name="crm-share"). */
export interface ShareBoot {
  id: string;
  embed: boolean;
  passwordRequired: boolean;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PASSWORD_FORM = `<main class="signin" id="share-password">
<h1>Reports</h1>
<form id="share-password-form" autocomplete="off">
<label for="share-password-input">Password</label>
<input id="share-password-input" name="password" type="password" required>
<button type="submit">Show the reports</button>
</form>
<p>This shared dashboard asks for a password.</p>
</main>`;

const GONE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link no longer works</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/dashboard.css">
</head>
<body>
<main class="signin" id="share-gone">
<h1>This link no longer works</h1>
<p>The shared dashboard it pointed to was revoked, has expired or never existed.
Ask whoever sent it for a new link.</p>
</main>
</body>
</html>
`;

export function sharePage(options: SharePageOptions): Handler {
  return async (ctx) => {
    const { request, url } = ctx;
    const id = ctx.match!.params.id ?? "";
    const embed = url.searchParams.get("embed") === "true";
    const body = (html: string) => request.method === "HEAD" ? null : html;
    const page = await options.shares.page(id);
    if (!page.ok) {
      return new Response(body(GONE), {
        status: 404,
        headers: { ...pageHeaders(), "cache-control": "no-store" },
      });
    }
    ctx.siteId = page.siteId;
    const boot: ShareBoot = { id, embed, passwordRequired: page.passwordRequired };
    const html = pageHtml({
      head: `<meta name="crm-share" content="${escapeHtml(JSON.stringify(boot))}">\n`,
      root: page.passwordRequired ? PASSWORD_FORM : "",
    });
    return new Response(body(html), {
      status: 200,
      headers: {
        ...pageHeaders(embed ? page.embedOrigins : []),
        "cache-control": "no-store",
      },
    });
  };
}
