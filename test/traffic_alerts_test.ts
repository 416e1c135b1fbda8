/**
 * Traffic alerts end to end: a spike when the visitors of the last 30
 * minutes reach the threshold, a drop when those of the last 12 hours are
 * below it (not before the site is 12 hours old), each at most once per 12
 * hours, each as a mail (Mailpit, .ci/tools.sh) and as a signed
 * traffic.spike / traffic.drop webhook. A ManualClock moves the hours.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../services/lib/clock.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { statsSite, type StoredRow, storeRows } from "./helpers/stats.ts";
import { MAILPIT, type Mailpit, startMailpit } from "./helpers/mailpit.ts";
import { type Receiver, startReceiver } from "./helpers/webhook_receiver.ts";

const SITE = "alerts";
const SECRET = "whsec_" + btoa("t".repeat(32));
const HOUR = 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const view = (atMs: number, visitor: string): StoredRow => ({
  at: atMs,
  kind: "view",
  body: { u: `https://${SITE}.example/`, v: visitor },
});

describe.skipIf(!MAILPIT).each(SYSTEM_STORAGES)("traffic alerts on %s", (storage) => {
  let mailpit: Mailpit;
  let receiver: Receiver;
  let sys: TestSystem;
  // Real time to begin with, so the receiver's check of webhook-timestamp holds for the spike.
  const clock = new ManualClock(Date.now());
  const subjects = async () => (await mailpit.messages()).map((m) => m.Subject);

  beforeAll(async () => {
    mailpit = await startMailpit();
    receiver = startReceiver(SECRET);
    sys = await startTestSystem({
      storage,
      clock,
      ingest: { mailCheckMs: 100 },
      env: {
        SMTP_URL: mailpit.smtpUrl,
        PUBLIC_URL: "https://stats.example.com",
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_ALLOW_INSECURE: "1",
      },
    });
    const manifest = await statsSite(SITE, "Europe/Berlin", {
      notifications: {
        trafficAlerts: [
          { to: "ops@owner.example", kind: "spike", threshold: 3 },
          { to: "ops@owner.example", kind: "drop", threshold: 2 },
        ],
      },
      webhooks: [{
        url: `${receiver.url}/traffic`,
        events: ["traffic.spike", "traffic.drop"],
        secret: SECRET,
      }],
    });
    await importManifest(sys.system.admin, JSON.stringify(manifest));
  }, 180_000);
  afterAll(async () => {
    await sys?.close();
    await receiver?.close();
    await mailpit?.stop();
  });

  it("fires a spike once when the last 30 minutes reach the threshold", async () => {
    const now = clock.now();
    await storeRows(sys, SITE, [view(now - 60_000, "v1"), view(now - 30_000, "v2")]);
    await sleep(800);
    // Two visitors, a new site: neither a spike nor (before 12 hours) a drop.
    expect(await subjects()).toEqual([]);
    await storeRows(sys, SITE, [view(now - 10_000, "v3")]);
    const [mail] = await mailpit.waitFor(() => true);
    expect(mail.Subject).toBe("Demo site: traffic spike: 3 visitors in the last 30 minutes");
    expect(mail.To.map((a) => a.Address)).toEqual(["ops@owner.example"]);
    const [hook] = await receiver.waitFor((d) => d.type === "traffic.spike");
    expect(hook.verified).toBe(true);
    expect(hook.body.data).toEqual({
      siteId: SITE,
      kind: "spike",
      visitors: 3,
      threshold: 3,
      window: 30,
    });
    // More visitors within 12 hours: no second alert.
    await storeRows(sys, SITE, [view(now, "v4"), view(now, "v5")]);
    clock.advance(HOUR);
    await storeRows(sys, SITE, [
      view(clock.now(), "v6"),
      view(clock.now(), "v7"),
      view(clock.now(), "v8"),
    ]);
    await sleep(800);
    expect(await subjects()).toHaveLength(1);
    expect(receiver.of("traffic.spike")).toHaveLength(1);
  }, 120_000);

  it("fires a drop once the site is 12 hours old and its last 12 hours stay below it", async () => {
    await mailpit.clear();
    // 13 hours on from the first rows: the last 12 hours hold v6 to v8, three visitors.
    clock.advance(12 * HOUR);
    await sleep(800);
    expect(await subjects()).toEqual([]);
    // Two hours later the window holds none of them.
    clock.advance(2 * HOUR);
    const [mail] = await mailpit.waitFor(() => true);
    expect(mail.Subject).toBe("Demo site: traffic drop: 0 visitors in the last 12 hours");
    const [hook] = await receiver.waitFor((d) => d.type === "traffic.drop");
    expect(hook.body.data).toEqual({
      siteId: SITE,
      kind: "drop",
      visitors: 0,
      threshold: 2,
      window: 720,
    });
    clock.advance(HOUR);
    await sleep(800);
    expect(await subjects()).toHaveLength(1);
    expect(receiver.of("traffic.drop")).toHaveLength(1);
  }, 120_000);
});
