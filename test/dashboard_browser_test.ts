/**
 * The reports page in Chromium, on the system as `deno task start` starts it
 * on empty storage (in this process): the demo site and its weeks of
 * history. Sign in with the demo's report key, read the numbers off the page
 * and compare them with POST /stats/v1/query, switch reports, download a
 * table as CSV, sign out; and a wrong key is refused. That `deno task start`
 * announces the dashboard with the key is test/commands_test.ts's.
 * A screenshot of the Traffic report is taken (into docs/images/dashboard.png
 * with UPDATE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, BROWSER_TESTS, launchBrowser } from "./helpers/browser.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { demoKeys } from "../services/cli/system.ts";

/** The docs' picture is refreshed on request only, so a test run leaves the tree as it was. */
const SCREENSHOT = Deno.env.get("UPDATE_SCREENSHOTS") === "1"
  ? new URL("../docs/images/dashboard.png", import.meta.url).pathname
  : `${Deno.makeTempDirSync({ prefix: "crm-screenshot-" })}/dashboard.png`;

describe.runIf(BROWSER_TESTS)("the dashboard", () => {
  let browser: Browser;
  let system: TestSystem;
  let reportKey: string;

  beforeAll(async () => {
    system = await startTestSystem({ demo: true });
    expect(system.system.demoLoaded).toBe(true);
    reportKey = (await demoKeys()).reportKey;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const api = async (body: Record<string, unknown>) => {
    const answer = await fetch(`${system.url}/stats/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": reportKey },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    return await answer.json();
  };

  it("signs in, shows the reports as the API answers them, and signs out", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const blocked: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(system.url)) blocked.push(request.url());
    });
    await page.goto(`${system.url}/dashboard/`);
    await page.fill("#key", reportKey);
    await page.click("#signin-form button[type=submit]");
    await page.waitForSelector('[data-metric="visitors"]');
    expect(page.url()).not.toContain(reportKey);
    expect(await page.evaluate(() => sessionStorage.getItem("crm_report_key"))).toBe(reportKey);

    const traffic = await api({
      metrics: ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"],
      date_range: "30d",
    });
    const [visitors, visits, pageviews, bounce] = traffic.results[0].metrics;
    expect(visitors).toBeGreaterThan(100); // the demo's history is there
    expect(await page.textContent('[data-metric="visitors"]')).toBe(String(visitors));
    expect(await page.textContent('[data-metric="visits"]')).toBe(String(visits));
    expect(await page.textContent('[data-metric="pageviews"]')).toBe(String(pageviews));
    expect(await page.textContent('[data-metric="bounce_rate"]')).toBe(`${bounce.toFixed(1)}%`);
    expect(await page.textContent('[data-testid="zone"]')).toContain("Europe/Berlin");
    expect(await page.locator("#chart canvas").count()).toBeGreaterThan(0);

    const channels = await api({
      metrics: ["visits"],
      date_range: "30d",
      dimensions: ["visit:channel"],
    });
    const rows = await page.locator('[data-testid="breakdown"] tbody tr').allTextContents();
    expect(rows).toHaveLength(channels.results.length);
    const first = channels.results[0];
    expect(await page.textContent('[data-testid="breakdown"] tbody tr:first-child td:first-child'))
      .toBe(first.dimensions[0]);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    const png = await Deno.readFile(SCREENSHOT);
    expect([...png.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]); // "PNG"

    const download = page.waitForEvent("download");
    await page.click('[data-testid="csv"]');
    const csv = await Deno.readTextFile(await (await download).path());
    expect(csv.split("\r\n")[0]).toBe(
      "visit:channel,visitors,visits,pageviews,bounce_rate,visit_duration",
    );
    expect(csv.split("\r\n").filter(Boolean)).toHaveLength(channels.results.length + 1);

    await page.click('[data-report="events"]');
    await page.waitForSelector('[data-metric="events"]');
    const events = await api({
      metrics: ["events", "revenue"],
      date_range: "30d",
      dimensions: ["event:name"],
    });
    const purchase = events.results.find((r: { dimensions: string[] }) =>
      r.dimensions[0] === "purchase"
    );
    const purchaseRow = page.locator('[data-testid="breakdown"] tbody tr', { hasText: "purchase" });
    await purchaseRow.waitFor();
    const cells = await purchaseRow.locator("td").allTextContents();
    expect(cells[1]).toBe(String(purchase.metrics[0]));
    expect(cells[2]).toBe(`${(purchase.metrics[1].EUR / 100).toFixed(2)} EUR`);
    expect(cells[3]).toMatch(/^\d+\.\d%$/);

    await page.click('[data-report="ads"]');
    await page.locator('[data-testid="breakdown"] tbody tr', { hasText: "spring-ads" }).waitFor();

    await page.click("#signout");
    expect(await page.isVisible("#signin")).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem("crm_report_key"))).toBeNull();
    expect(blocked).toEqual([]);
    await page.close();
  }, 60_000);

  it("refuses a key that is not a report key of a site", async () => {
    const page = await browser.newPage();
    await page.goto(`${system.url}/dashboard/`);
    await page.fill("#key", `rk_${"0".repeat(48)}`);
    await page.click("#signin-form button[type=submit]");
    await expect.poll(() => page.textContent("#signin-error")).toContain("not valid");
    expect(await page.isVisible("#app")).toBe(false);
    await page.close();
  });
});
