/**
 * The picture of a weekly report in docs/email-reports.md: with
 * UPDATE_SCREENSHOTS=1 (and Mailpit and Chromium present) it starts the
 * system with the bundled demo site and its weeks of traffic, gives the demo
 * site a weekly recipient, sends the report with `admin reports send` to
 * Mailpit, and renders the HTML part Mailpit received in Chromium into
 * docs/images/weekly-report.png. Skipped otherwise.
 */
import { afterAll, describe, expect, it } from "vitest";
import { exportManifest, importManifest } from "../services/cli/site_manifest.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { runAdmin } from "./helpers/admin.ts";
import { MAILPIT, type Mailpit, startMailpit } from "./helpers/mailpit.ts";
import { BROWSER_TESTS, launchBrowser } from "./helpers/browser.ts";

const UPDATE = Deno.env.get("UPDATE_SCREENSHOTS") === "1";
const SHOT = new URL("../docs/images/weekly-report.png", import.meta.url).pathname;

describe.runIf(UPDATE && MAILPIT && BROWSER_TESTS)("the weekly report's picture", () => {
  let mailpit: Mailpit | undefined;
  let sys: TestSystem | undefined;
  afterAll(async () => {
    await sys?.close();
    await mailpit?.stop();
  });

  it("renders the demo site's weekly report as received", async () => {
    mailpit = await startMailpit();
    sys = await startTestSystem({
      demo: true,
      env: { SMTP_URL: mailpit.smtpUrl, PUBLIC_URL: "https://crm.example" },
    });
    const manifest = await exportManifest(sys.system.admin, "demo");
    manifest.notifications = { emailReports: [{ to: "owner@demo.example", every: "week" }] };
    await importManifest(sys.system.admin, JSON.stringify(manifest));
    const sent = await runAdmin(["reports", "send", "demo", "--period", "week"], {
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
      INGEST_URL: sys.config.ingestUrl,
    });
    expect(JSON.parse(sent.stdout)).toEqual({ sent: 1 });
    const [summary] = await mailpit.waitFor(() => true);
    const { HTML } = await mailpit.message(summary.ID);
    expect(HTML).toContain("weekly report");
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 640, height: 800 } });
      await page.setContent(HTML);
      await page.screenshot({ path: SHOT, fullPage: true });
    } finally {
      await browser.close();
    }
    expect((await Deno.stat(SHOT)).size).toBeGreaterThan(10_000);
  }, 300_000);
});
