/**
 * Email reports against a real SMTP server (Mailpit, .ci/tools.sh): the
 * weekly report goes out on Monday at 09:00 in the site's zone with the
 * numbers the reports API gives, as HTML and plain text; `admin reports
 * send` sends the last complete period at once and keeps the once rule; a
 * restart (and on Postgres a second replica beside the first) sends no mail
 * twice; a mail the server refuses is sent when it accepts again. The clock
 * is a ManualClock, so Monday comes without waiting for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../services/lib/clock.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem, type TestSystemOptions } from "./helpers/system.ts";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { reportKeyOf, statsQuery, statsSite, type StoredRow, storeRows } from "./helpers/stats.ts";
import { runAdmin } from "./helpers/admin.ts";
import { MAILPIT, type Mailpit, type MessageSummary, startMailpit } from "./helpers/mailpit.ts";

const SITE = "mailsite";
const PUBLIC_URL = "https://stats.example.com";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (iso: string) => Date.parse(iso);

const view = (iso: string, visitor: string, path: string, referrer?: string): StoredRow => ({
  at: iso,
  kind: "view",
  body: {
    u: `https://${SITE}.example${path}`,
    v: visitor,
    ...(referrer ? { r: referrer } : {}),
  },
});

/** The same storage for systems started one after another, or side by side on Postgres. */
async function sharedStorage(storage: "pglite" | "postgres") {
  if (storage === "postgres") {
    const pg = await freshPostgresUrl({ migrated: true });
    return { options: { storage, databaseUrl: pg.url } as TestSystemOptions, drop: pg.drop };
  }
  const dir = await Deno.makeTempDir({ prefix: "crm-mail-" });
  return {
    options: { storage, env: { CRM_DATA_DIR: dir } } as TestSystemOptions,
    drop: () => Deno.remove(dir, { recursive: true }),
  };
}

const to = (address: string) => (m: MessageSummary) => m.To.some((a) => a.Address === address);

describe.skipIf(!MAILPIT).each(SYSTEM_STORAGES)("email reports on %s", (storage) => {
  let mailpit: Mailpit;
  let shared: Awaited<ReturnType<typeof sharedStorage>>;
  const clock = new ManualClock(at("2026-11-17T10:00:00Z"));
  const systems: TestSystem[] = [];
  const start = async () => {
    const sys = await startTestSystem({
      ...shared.options,
      clock,
      ingest: { mailCheckMs: 100 },
      env: {
        ...shared.options.env,
        SMTP_URL: mailpit.smtpUrl,
        PUBLIC_URL,
        MAIL_FROM: "CRM reports <reports@stats.example.com>",
      },
    });
    systems.push(sys);
    return sys;
  };
  const admin = (sys: TestSystem, ...args: string[]) =>
    runAdmin(args, {
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
      INGEST_URL: sys.config.ingestUrl,
    });

  beforeAll(async () => {
    mailpit = await startMailpit();
    shared = await sharedStorage(storage);
  });
  afterAll(async () => {
    for (const sys of systems) await sys.close().catch(() => {});
    await shared?.drop();
    await mailpit?.stop();
  }, 300_000);

  it(
    "sends the weekly report on Monday at 09:00 local, with the reports API's numbers",
    async () => {
      const sys = await start();
      await importManifest(
        sys.system.admin,
        JSON.stringify(
          await statsSite(SITE, "Europe/Berlin", {
            notifications: {
              emailReports: [
                { to: "weekly@owner.example", every: "week" },
                { to: "monthly@owner.example", every: "month" },
              ],
            },
          }),
        ),
      );
      await storeRows(sys, SITE, [
        view("2026-11-10T09:00:00Z", "v0", "/"),
        view("2026-11-18T09:00:00Z", "v1", "/", "https://www.google.com/"),
        view("2026-11-18T09:01:00Z", "v1", "/pricing", "https://www.google.com/"),
        view("2026-11-19T12:00:00Z", "v2", "/pricing", "https://news.example/a"),
        view("2026-11-22T22:30:00Z", "v3", "/"), // Sunday 23:30 in Berlin: still that week
        view("2026-11-22T23:30:00Z", "v4", "/late"), // Monday 00:30 in Berlin: the next week
      ]);
      // Monday 08:59 in Berlin: not yet.
      clock.set(at("2026-11-23T07:59:00Z"));
      await sleep(600);
      expect(await mailpit.messages()).toEqual([]);
      clock.set(at("2026-11-23T08:00:00Z"));
      const [summary] = await mailpit.waitFor(to("weekly@owner.example"));
      expect(summary.Subject).toBe("Demo site: weekly report, 16–22 Nov 2026");
      expect(summary.From).toEqual({ Name: "CRM reports", Address: "reports@stats.example.com" });
      const message = await mailpit.message(summary.ID);
      const text = message.Text.replaceAll("\r\n", "\n");
      const api = await statsQuery(sys, {
        metrics: ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"],
        date_range: ["2026-11-16", "2026-11-22"],
        include: { compare: ["2026-11-09", "2026-11-15"] },
      }, reportKeyOf(SITE));
      expect(api.status).toBe(200);
      const [visitors, visits, pageviews, bounce] = api.body.results[0].metrics;
      // v1's two page views without a session are two visits.
      expect([visitors, visits, pageviews]).toEqual([3, 4, 4]);
      expect(text).toMatch(new RegExp(`^Visitors +${visitors} +\\+200\\.0%$`, "m"));
      expect(text).toMatch(new RegExp(`^Page views +${pageviews} +\\+300\\.0%$`, "m"));
      expect(text).toMatch(new RegExp(`^Bounce rate +${bounce.toFixed(1)}% `, "m"));
      expect(text).toMatch(/^ {2}\d\. www\.google\.com +1$/m);
      expect(text).toMatch(/^ {2}\d\. Direct \/ none +1$/m);
      expect(text).toMatch(/^ {2}1\. \/ +2$/m);
      expect(text).toMatch(/^ {2}2\. \/pricing +2$/m);
      expect(text).not.toContain("/late");
      expect(text).toContain(`${PUBLIC_URL}/dashboard/`);
      expect(message.HTML).toContain(`href="${PUBLIC_URL}/dashboard/"`);
      expect(message.HTML).toContain("www.google.com");
      expect(await mailpit.raw(summary.ID)).toMatch(/multipart\/alternative/);
      // The monthly recipient came after 1 November's send time: nothing yet.
      expect((await mailpit.messages()).filter(to("monthly@owner.example"))).toEqual([]);
    },
    300_000,
  );

  it("reports send: the last complete period now, once per recipient", async () => {
    const sys = systems[0];
    const week = await admin(sys, "reports", "send", SITE, "--period", "week");
    expect(week.stderr).toBe("");
    expect(JSON.parse(week.stdout)).toEqual({ sent: 0 });
    const all = await admin(sys, "reports", "send", SITE);
    expect(JSON.parse(all.stdout)).toEqual({ sent: 1 });
    const [october] = await mailpit.waitFor(to("monthly@owner.example"));
    expect(october.Subject).toBe("Demo site: monthly report, October 2026");
    expect(JSON.parse((await admin(sys, "reports", "send", SITE)).stdout)).toEqual({ sent: 0 });
    const bad = await admin(sys, "reports", "send", "nosuchsite");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^reports send failed: site_not_found/);
  }, 300_000);

  it("sends each report once across a restart and a second replica", async () => {
    await systems[0].close();
    systems.length = 0;
    await start();
    // On Postgres a second replica beside it, both checking and sending.
    if (storage === "postgres") await start();
    clock.set(at("2026-11-30T08:00:00Z"));
    await mailpit.waitFor((m) => m.Subject === "Demo site: weekly report, 23–29 Nov 2026");
    await sleep(1_500); // many checks of every replica
    const subjects = (await mailpit.messages()).map((m) => `${m.To[0].Address} ${m.Subject}`);
    expect(subjects.sort()).toEqual([
      "monthly@owner.example Demo site: monthly report, October 2026",
      "weekly@owner.example Demo site: weekly report, 16–22 Nov 2026",
      "weekly@owner.example Demo site: weekly report, 23–29 Nov 2026",
    ]);
  }, 300_000);

  it("retries a mail the server refused until it is accepted", async () => {
    await mailpit.clear();
    await mailpit.refuse(451);
    clock.set(at("2026-12-01T08:00:00Z")); // the monthly report of November
    const outbox = () =>
      systems[0].system.platform.db!.query<{ state: string; attempts: number; last_error: string }>(
        `select state, attempts, last_error from ingest.mail_outbox
          where kind = 'report:month' and period = '2026-11-01/2026-11-30'`,
      );
    for (let i = 0; i < 100 && !(await outbox())[0]?.last_error; i++) await sleep(100);
    const [refused] = await outbox();
    expect(refused).toMatchObject({ state: "pending", attempts: 1 });
    expect(refused.last_error).toMatch(/451/);
    expect(await mailpit.messages()).toEqual([]);
    await mailpit.refuse(null);
    clock.advance(10_000); // past the first retry's wait
    const [november] = await mailpit.waitFor(to("monthly@owner.example"), 1, 30_000);
    expect(november.Subject).toBe("Demo site: monthly report, November 2026");
    await sleep(500);
    expect(await mailpit.messages()).toHaveLength(1);
    expect((await outbox())[0]).toMatchObject({ state: "sent", attempts: 2 });
  }, 300_000);
});
