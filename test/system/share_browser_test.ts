/// <reference lib="dom" />
/**
 * Share links in Chromium, on the demo site with its weeks of history: the
 * password form, a wrong and then the right password, the site's dashboard
 * read-only (no key prompt); the embedded page framed by a page of the site's
 * embedOrigins and refused inside any other. The browser's own routing
 * answers the pages of both origins and serves the gateway as
 * https://crm.example, as a deployment would, so no TLS server is needed.
 * No Content-Security-Policy violation on the way.
 *
 * With UPDATE_SCREENSHOTS=1 it writes docs/images/share.png (the shared
 * dashboard, 1440 px) and docs/images/share-embedded.png (embedded in an
 * intranet page).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, BROWSER_TESTS, launchBrowser, type Page } from "../helpers/browser.ts";
import { startTestSystem, type TestSystem } from "../helpers/system.ts";
import { settled } from "../helpers/dashboard.ts";
import { importManifest } from "../../services/cli/site_manifest.ts";

const UPDATE = Deno.env.get("UPDATE_SCREENSHOTS") === "1";
const SHOTS = UPDATE
  ? new URL("../../docs/images/", import.meta.url).pathname
  : `${Deno.makeTempDirSync({ prefix: "crm-screenshot-" })}/`;
const EMBEDDER = "https://intranet.example";
/** The gateway's public address in the embedding test. */
const PUBLIC = "https://crm.example";

/** An intranet page holding the embedded dashboard. */
const intranetPage = (src: string) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Intranet</title>
<style>body{font-family:system-ui,sans-serif;margin:0;background:#eef1f5}
header{background:#1f3a5f;color:#fff;padding:14px 24px;font-size:18px}
main{padding:20px 24px}iframe{width:100%;height:1500px;border:1px solid #c8d0da;border-radius:8px;background:#fff}</style>
</head><body><header>Acme intranet · Website numbers</header>
<main><iframe title="Website reports" src="${src}"></iframe></main></body></html>`;

describe.skipIf(!BROWSER_TESTS)("share links in Chromium", () => {
  let sys: TestSystem;
  let browser: Browser;
  const violations: string[] = [];

  const watch = (page: Page) =>
    page.on("console", (message) => {
      if (
        /Content Security Policy/.test(message.text()) && !/frame-ancestors/.test(message.text())
      ) {
        violations.push(message.text());
      }
    });

  beforeAll(async () => {
    sys = await startTestSystem({ demo: true });
    const demo = JSON.parse(
      await Deno.readTextFile(new URL("../../services/cli/demo_site.json", import.meta.url)),
    );
    demo.site.embedOrigins = [EMBEDDER];
    await importManifest(sys.system.admin, JSON.stringify(demo));
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await sys?.close();
  });

  it("asks for the password, refuses a wrong one, then shows the dashboard read-only", async () => {
    const { link } = await sys.system.admin.auth.createShareLink({
      siteId: "demo",
      password: "board 2026",
      label: "Board",
    });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    watch(page);
    await page.goto(`${link!.url}?range=7d`);
    await page.waitForSelector("#share-password-form");
    expect(await page.locator("#signin-form").count()).toBe(0);
    await page.fill("#share-password-input", "guess");
    await page.click("#share-password-form button[type=submit]");
    await page.waitForFunction(() =>
      /not right/.test(document.getElementById("signin-error")?.textContent ?? "")
    );
    await page.fill("#share-password-input", "board 2026");
    await page.click("#share-password-form button[type=submit]");
    await page.waitForSelector('[data-testid="cards"]');
    await settled(page);
    expect(await page.textContent('[data-testid="site"]')).toContain("demo");
    expect(await page.locator('[data-testid="copy-link"]').count()).toBe(1);
    expect(await page.locator("#signin-form").count()).toBe(0);
    // The password stays in the tab: a reload reads at once.
    await page.reload();
    await page.waitForSelector('[data-testid="cards"]');
    await settled(page);
    await page.screenshot({ path: `${SHOTS}share.png` });
    expect(violations).toEqual([]);
    await page.close();
  });

  it("is framed by a page of the site's embedOrigins, and refused inside any other", async () => {
    const { link } = await sys.system.admin.auth.createShareLink({ siteId: "demo" });
    const path = new URL(link!.url).pathname;
    const src = `${PUBLIC}${path}?embed=true&range=7d`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route(
      /^https:\/\/(intranet|elsewhere)\.example\//,
      (route) => route.fulfill({ contentType: "text/html", body: intranetPage(src) }),
    );
    await context.route(/^https:\/\/crm\.example\//, async (route) => {
      const url = route.request().url().replace(PUBLIC, sys.url);
      await route.fulfill({ response: await route.fetch({ url }) });
    });
    const page = await context.newPage();
    watch(page);
    await page.goto(`${EMBEDDER}/board`);
    const frame = page.frameLocator("iframe");
    await frame.locator('[data-testid="cards"]').waitFor();
    const inner = page.frames().find((f) => f.url().startsWith(`${PUBLIC}${path}`))!;
    await settled(inner as unknown as Page);
    expect(await frame.locator('[data-testid="signout"]').count()).toBe(0);
    expect(await frame.locator('[data-testid="copy-link"]').count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}share-embedded.png` });

    const other = await context.newPage();
    const refused = other.waitForEvent("console", {
      predicate: (m) => /frame-ancestors/.test(m.text()),
    });
    await other.goto("https://elsewhere.example/board");
    expect((await refused).text()).toContain(EMBEDDER);
    expect(await other.frameLocator("iframe").locator("#root").count()).toBe(0);
    expect(violations).toEqual([]);
    await context.close();
  });
});
