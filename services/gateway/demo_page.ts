/**
 * The demo site's page (widget/demo/index.html), served by `deno task start`
 * on the gateway's own origin, which the demo site lists as a domain. Every
 * path under /demo/ answers the same page: it is a single-page app.
 */
import type { Handler } from "./http.ts";

const PAGE = new URL("../../widget/demo/index.html", import.meta.url);

export async function demoPage(siteKey: string): Promise<Handler> {
  const html = (await Deno.readTextFile(PAGE)).replace("__SITE_KEY__", siteKey);
  return () =>
    new Response(html, {
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
    });
}
