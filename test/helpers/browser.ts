/**
 * Chromium (Debian's package) driven by playwright-core, and a small server
 * for the test pages: on 127.0.0.1 (a registered domain of the test site) and
 * on localhost (not registered), each page loading the gateway's widget.js.
 */
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Page,
  type Request,
} from "playwright-core";

/**
 * Where Chromium is. Setting CHROMIUM_PATH (as .ci/run does) promises a
 * browser, so a missing one fails the browser tests; without it they run when
 * Debian's chromium is installed and are skipped, saying so, when it is not
 * (`deno task test` passes on a machine with Deno alone).
 */
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") || "/usr/bin/chromium";
const CHROMIUM_PROMISED = Boolean(Deno.env.get("CHROMIUM_PATH"));

function installed(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

export const BROWSER_TESTS = CHROMIUM_PROMISED || installed(CHROMIUM);
if (!BROWSER_TESTS) {
  console.warn(
    `browser tests skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH to require one)`,
  );
}

export async function launchBrowser(): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface PageServer {
  /** http://127.0.0.1:PORT: a registered origin. */
  origin: string;
  /** http://localhost:PORT: the same server under a host the site does not list. */
  foreignOrigin: string;
  /** Serves html at path (and at every path below it, for single-page apps). */
  add(path: string, html: string): void;
  close(): Promise<void>;
}

export function startPageServer(): PageServer {
  const pages = new Map<string, string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    const match = [...pages.keys()].filter((p) => path === p || path.startsWith(p + "/"))
      .sort((a, b) => b.length - a.length)[0];
    if (!match) return new Response("not found", { status: 404 });
    return new Response(pages.get(match), {
      headers: { "content-type": "text/html; charset=utf-8" },
    });
  });
  const port = server.addr.port;
  return {
    origin: `http://127.0.0.1:${port}`,
    foreignOrigin: `http://localhost:${port}`,
    add: (path, html) => void pages.set(path, html),
    close: () => server.shutdown(),
  };
}

export interface WidgetPageOptions {
  gateway: string;
  /** data-* attributes of the script tag, e.g. { spa: "hash", consent: "required" }. */
  data?: Record<string, string>;
  /** Markup placed before the widget's script tag (queues, early consent). */
  before?: string;
  body?: string;
  title?: string;
}

export function widgetPage(options: WidgetPageOptions): string {
  const data = Object.entries(options.data ?? {}).map(([k, v]) => ` data-${k}="${v}"`).join("");
  return `<!doctype html><html><head><meta charset="utf-8"><title>${
    options.title ?? "Test page"
  }</title>
${options.before ?? ""}
<script defer src="${options.gateway}/widget.js"${data}></script></head>
<body>${options.body ?? ""}</body></html>`;
}

export interface Beacon {
  path: string;
  body: Record<string, unknown>;
  request: Request;
}

/**
 * Every collection request the page sends, with its parsed body. Requests
 * pass through an interception that lets them continue unchanged: without
 * one, Chromium does not report a beacon's body.
 */
export async function recordBeacons(page: Page): Promise<Beacon[]> {
  const seen: Beacon[] = [];
  await page.route("**/marketing/**", (route) => route.continue());
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (request.method() !== "POST" || !url.pathname.startsWith("/marketing/")) return;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(request.postData() ?? "{}");
    } catch { /* not JSON: left empty, the test sees it */ }
    seen.push({ path: url.pathname, body, request });
  });
  return seen;
}

export async function storage(page: Page): Promise<Record<string, string | null>> {
  return await page.evaluate(() => {
    const out: Record<string, string | null> = {};
    for (const key of ["crm_vid", "crm_sid", "crm_sat", "crm_consent"]) {
      out[key] = localStorage.getItem(key);
    }
    return out;
  });
}

export type { Browser, BrowserContext, Page };
