/**
 * Webhook delivery across restarts and replicas. A message whose receiver
 * failed is delivered, with the same webhook-id, by the next system started
 * on the same storage (a restart); two systems on one Postgres (two
 * replicas of every service, each with its delivery workers) deliver a
 * scheduled post and a lead once, never the same attempt twice.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../services/lib/clock.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { DATABASE_URL, SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { analyticsManifest, type Json, SECRET_KEY } from "./helpers/marketing.ts";
import { startReceiver } from "./helpers/webhook_receiver.ts";

const SECRET = "whsec_" + btoa("r".repeat(32));
const LOOPBACK = { WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_ALLOW_INSECURE: "1" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function postLead(sys: TestSystem, body: Json): Promise<Response> {
  return fetch(`${sys.url}/marketing/lead`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
    body: JSON.stringify(body),
  });
}

/** The same storage for systems started one after another (or side by side on Postgres). */
async function sharedStorage(storage: "pglite" | "postgres") {
  if (storage === "postgres") {
    const pg = await freshPostgresUrl({ migrated: true });
    return { options: { storage, databaseUrl: pg.url }, drop: pg.drop };
  }
  const dir = await Deno.makeTempDir({ prefix: "crm-webhooks-" });
  return {
    options: { storage, env: { CRM_DATA_DIR: dir } },
    drop: () => Deno.remove(dir, { recursive: true }),
  };
}

describe.each(SYSTEM_STORAGES)("webhooks across a restart on %s", (storage) => {
  const receiver = startReceiver(SECRET);
  afterAll(() => receiver.close());

  it("delivers a message that failed before the restart, with the same id", async () => {
    const shared = await sharedStorage(storage);
    const clock = new ManualClock(Date.now());
    const manifest = await analyticsManifest();
    manifest.webhooks = [{
      url: `${receiver.url}/leads`,
      events: ["lead.created"],
      secret: SECRET,
    }];
    const start = () =>
      startTestSystem({
        ...shared.options,
        clock,
        env: { ...LOOPBACK, ...shared.options.env },
      });
    let sys: TestSystem | undefined = await start();
    try {
      await importManifest(sys.system.admin, JSON.stringify(manifest));
      receiver.failNext(1_000);
      expect((await postLead(sys, { lead_id: "R-1", email: "r@example.com" })).status).toBe(200);
      const [failed] = await receiver.waitFor((d) => d.type === "lead.created");
      expect(failed.status).toBe(500);
      // Down while the message waits for its retry.
      await sys.close();
      sys = undefined;
      receiver.failNext(0);
      clock.advance(10_000);
      sys = await start();
      const [, delivered] = await receiver.waitFor((d) => d.type === "lead.created", 2, 30_000);
      expect(delivered.status).toBe(204);
      expect(delivered.id).toBe(failed.id);
      expect(delivered.raw).toBe(failed.raw);
      expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
    } finally {
      await sys?.close();
      await shared.drop();
    }
  }, 180_000);
});

describe.runIf(DATABASE_URL)("webhooks with two replicas on one Postgres", () => {
  const receiver = startReceiver(SECRET);
  afterAll(() => receiver.close());

  it("delivers a scheduled post and a lead once, however many workers look", async () => {
    const shared = await sharedStorage("postgres");
    const clock = new ManualClock(Date.now());
    const systems: TestSystem[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        systems.push(await startTestSystem({ ...shared.options, clock, env: LOOPBACK }));
      }
      const manifest = await analyticsManifest();
      manifest.webhooks = [{
        url: `${receiver.url}/both`,
        events: ["post.published", "lead.created"],
        secret: SECRET,
      }];
      const publishedAt = new Date(clock.now() + 10_000).toISOString();
      manifest.posts.push({
        slug: "soon",
        status: "published",
        publishedAt,
        title: { en: "Soon" },
        body: { en: "<p>Soon</p>" },
      });
      await importManifest(systems[0].system.admin, JSON.stringify(manifest));
      // Every lead through both replicas' gateways.
      for (let i = 0; i < 10; i++) {
        const answer = await postLead(systems[i % 2], {
          lead_id: `P-${i}`,
          email: `${i}@x.example`,
        });
        expect(answer.status).toBe(200);
      }
      clock.advance(10_000);
      const due = performance.now();
      const [post] = await receiver.waitFor((d) => d.type === "post.published");
      expect(post.arrivedAt - due).toBeLessThan(5_000);
      expect(post.body.data).toEqual({ siteId: "demo", slug: "soon", publishedAt });
      await receiver.waitFor((d) => d.type === "lead.created", 10);
      // Both replicas keep looking; nothing arrives twice.
      await sleep(3_000);
      expect(receiver.of("post.published")).toHaveLength(1);
      const leads = receiver.of("lead.created");
      expect(leads).toHaveLength(10);
      expect(new Set(leads.map((d) => d.id)).size).toBe(10);
      expect(leads.map((d) => d.body.data.leadId).sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => `P-${i}`).sort(),
      );
      expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
    } finally {
      for (const sys of systems) await sys.close();
      await shared.drop();
    }
  }, 180_000);
});
