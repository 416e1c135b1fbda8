/// <reference lib="dom" />
/**
 * The demo page `deno task start` serves: a visitor in Chromium accepts the
 * banner, navigates, buys and subscribes, and all of it is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { type Browser, BROWSER_TESTS, launchBrowser, recordBeacons } from "./helpers/browser.ts";
import { exportRows, waitForRows } from "./helpers/exports.ts";
import { STORAGES } from "./helpers/env.ts";

const DEMO = new URL("../services/cli/demo_site.json", import.meta.url);
/**
 * The run's server when it has one, as a cluster runs: the page's flow is this file's subject,
 * not the storage (the browser tests of `deno task test:system` run on PGlite).
 */
const STORAGE = STORAGES[STORAGES.length - 1];
const DESKTOP_CHROME =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

describe.skipIf(!BROWSER_TESTS)("the demo page", () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await startTestSystem({
      storage: STORAGE,
      seed: await Deno.readTextFile(DEMO),
      demoPage: true,
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await sys?.close();
  });

  it("is served only where the demo site is loaded", async () => {
    expect(sys.system.demoPageUrl).toBe(`${sys.url}/demo/`);
    const other = await startTestSystem({ storage: STORAGE });
    try {
      expect(other.system.demoPageUrl).toBeUndefined();
      const missing = await other.get("/demo/");
      await missing.body?.cancel();
      expect(missing.status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it("counts nothing before the banner is accepted, then the visit, the navigation, a purchase and a lead", async () => {
    const context = await browser.newContext({ userAgent: DESKTOP_CHROME });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const beacons = await recordBeacons(page);
    await page.goto(`${sys.url}/demo/`);
    await expect.poll(() => page.textContent("#title")).toBe(
      "Small-batch coffee, roasted in Hamburg",
    );
    expect(await page.isVisible("#banner")).toBe(true);
    await page.waitForTimeout(500);
    expect(beacons).toEqual([]);

    await page.click("#grant");
    await expect.poll(() => beacons.filter((b) => b.path === "/marketing/view").length).toBe(1);
    expect(await page.isVisible("#banner")).toBe(false);
    await page.click('nav a[data-page="about"]');
    await expect.poll(() => page.textContent("#title")).toBe("Our story");
    await expect.poll(() => beacons.filter((b) => b.path === "/marketing/view").length).toBe(2);
    await page.click("#buy");
    await page.fill('#newsletter input[name="email"]', "mara@example.com");
    await page.click("#newsletter button");
    await expect.poll(() => beacons.filter((b) => b.path === "/marketing/act").length).toBe(2);

    const visitorId = await page.evaluate(() => localStorage.getItem("crm_vid"));
    const views = await waitForRows(
      () => exportRows(sys, "pageviews", "demo"),
      (rows) => rows.filter((r) => r.visitorId === visitorId).length === 2,
    );
    expect(
      views.filter((r) => r.visitorId === visitorId).map((r) => new URL(String(r.url)).pathname),
    ).toEqual([
      "/demo/",
      "/demo/about",
    ]);
    const events = await waitForRows(
      () => exportRows(sys, "events", "demo"),
      (rows) => rows.filter((r) => r.visitorId === visitorId).length === 2,
    );
    expect(
      events.filter((r) => r.visitorId === visitorId).map((r) => [r.name, r.value, r.currency]),
    ).toEqual([
      ["purchase", 1490, "EUR"],
      ["newsletter_signup", null, null],
    ]);
    const leads = await waitForRows(
      () => exportRows(sys, "leads", "demo"),
      (rows) => rows.some((r) => r.email === "mara@example.com"),
    );
    expect(leads.find((r) => r.email === "mara@example.com")).toMatchObject({
      visitorId,
      form: "newsletter",
    });
    expect(errors).toEqual([]);
    await context.close();
  });
});
