/**
 * Webhooks end to end, on every storage: the whole system with a receiver on
 * the loopback (WEBHOOK_ALLOW_PRIVATE=1 and WEBHOOK_ALLOW_INSECURE=1, as an
 * operator testing on one machine sets them), every delivery's signature
 * checked by the independent `standardwebhooks` package. The clock is a
 * ManualClock: a retry or a scheduled post falls due when the test moves it;
 * the test then waits (real time) only for the worker's next look.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../services/lib/clock.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, exported, type Json, SECRET_KEY } from "./helpers/marketing.ts";
import { type Receiver, startReceiver } from "./helpers/webhook_receiver.ts";
import { runAdmin } from "./helpers/admin.ts";

export const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ALL = ["content.published", "post.published", "lead.created"];
const LOOPBACK = { WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_ALLOW_INSECURE: "1" };
const SECOND = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function adminEnv(sys: TestSystem) {
  return {
    AUTH_URL: sys.config.authUrl,
    CONTENT_URL: sys.config.contentUrl,
    INGEST_URL: sys.config.ingestUrl,
  };
}

async function webhooksLog(sys: TestSystem, ...args: string[]): Promise<Json[]> {
  const run = await runAdmin(["webhooks", "log", "demo", ...args], adminEnv(sys));
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

/** Waits (real time) until the log holds an attempt that matches: the worker has recorded it. */
async function loggedAttempt(sys: TestSystem, match: (a: Json) => boolean): Promise<Json> {
  for (let waited = 0;; waited += 100) {
    const found = (await webhooksLog(sys)).find(match);
    if (found) return found;
    if (waited > 20_000) throw new Error("the attempt was never logged");
    await sleep(100);
  }
}

function postLead(sys: TestSystem, body: Json): Promise<Response> {
  return fetch(`${sys.url}/marketing/lead`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
    body: JSON.stringify(body),
  });
}

describe.each(SYSTEM_STORAGES)("webhooks on %s", (storage) => {
  const clock = new ManualClock(Date.now());
  let receiver: Receiver;
  let sys: TestSystem;
  let manifest: Json;
  const importIt = (m: Json) => importManifest(sys.system.admin, JSON.stringify(m));

  beforeAll(async () => {
    receiver = startReceiver(WEBHOOK_SECRET);
    manifest = await analyticsManifest();
    manifest.webhooks = [{ url: `${receiver.url}/all`, events: ALL, secret: WEBHOOK_SECRET }];
    sys = await startTestSystem({ storage, clock, seed: manifest, env: LOOPBACK });
  });

  afterAll(async () => {
    await sys?.close();
    await receiver?.close();
  });

  afterEach(() => {
    // Every delivery of every test carried a signature the reference library accepts.
    for (const d of receiver.deliveries) expect(d.verified, d.verifyError).toBe(true);
  });

  it("tells of the seed import: every answer it made, each list sorted", async () => {
    const [message] = await receiver.waitFor((d) => d.type === "content.published");
    expect(message.path).toBe("/all");
    expect(message.body.data).toEqual({
      siteId: "demo",
      pages: ["home"],
      sections: ["footer", "hero"],
      blocks: ["hero/card", "hero/cover", "hero/cta", "hero/items", "hero/title"],
      posts: ["hello-world"],
    });
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(message.timestamp).toBe(Math.floor(clock.now() / 1000));
    expect(Object.keys(message.body)).toEqual(["type", "timestamp", "data"]);
    expect(Date.parse(message.body.timestamp)).toBeLessThanOrEqual(clock.now());
  });

  it("tells of an import that changed answers, and of none that changed nothing", async () => {
    await receiver.waitFor((d) => d.type === "content.published");
    const again = await importIt(manifest);
    expect(again.changed).toBe(false);
    const changed = structuredClone(manifest);
    changed.pages[0].sections[0].blocks[0].content.en = "Hello again";
    changed.sections[0].show = false;
    await importIt(changed);
    const [, second] = await receiver.waitFor((d) => d.type === "content.published", 2);
    expect(second.body.data).toEqual({
      siteId: "demo",
      pages: ["home"],
      sections: ["footer", "hero"],
      blocks: ["hero/title"],
      posts: [],
    });
    // Had the unchanged import sent one, it would have been due first.
    await sleep(1500);
    expect(receiver.of("content.published")).toHaveLength(2);
    await importIt(manifest);
    await receiver.waitFor((d) => d.type === "content.published", 3);
  });

  it("tells of a stored lead with the lead as leads export prints it, once per lead_id", async () => {
    const answer = await postLead(sys, { lead_id: "L-1", email: "ann@example.com", form: "demo" });
    expect(answer.status).toBe(200);
    const [message] = await receiver.waitFor((d) => d.type === "lead.created");
    const [stored] = (await exported(sys, "leads")).filter((l) => l.leadId === "L-1");
    expect(message.body.data).toEqual({ siteId: "demo", ...stored });
    expect(message.body.timestamp).toBe(stored.receivedAt);
    const repeated = await postLead(sys, { lead_id: "L-1", email: "ann@example.com" });
    expect(await repeated.json()).toMatchObject({ duplicate: true });
    await postLead(sys, { lead_id: "L-2", email: "bob@example.com" });
    await receiver.waitFor((d) => d.type === "lead.created", 2);
    expect(receiver.of("lead.created").map((d) => d.body.data.leadId)).toEqual(["L-1", "L-2"]);
  });

  it("tries again with the same webhook-id until the receiver takes it, all in the log", async () => {
    receiver.failNext(2, 503);
    await postLead(sys, { lead_id: "L-retry", email: "retry@example.com" });
    const isIt = (d: { type: string; body: Json }) =>
      d.type === "lead.created" && d.body.data.leadId === "L-retry";
    const [first] = await receiver.waitFor(isIt);
    expect(first.status).toBe(503);
    // The first retry is due within 5 s of the failure (recorded at the clock's time then):
    // moving the clock 5 s makes it due.
    await loggedAttempt(sys, (a) => a.id === first.id && a.attempt === 1);
    clock.advance(5 * SECOND);
    await receiver.waitFor(isIt, 2);
    await loggedAttempt(sys, (a) => a.id === first.id && a.attempt === 2);
    clock.advance(20 * SECOND);
    const attempts = await receiver.waitFor(isIt, 3);
    expect(attempts.map((d) => d.status)).toEqual([503, 503, 204]);
    expect(new Set(attempts.map((d) => d.id)).size).toBe(1);
    expect(new Set(attempts.map((d) => d.raw)).size).toBe(1);
    expect(attempts[2].timestamp).toBeGreaterThan(attempts[0].timestamp);
    await loggedAttempt(sys, (a) => a.id === first.id && a.attempt === 3);
    const log = (await webhooksLog(sys)).filter((a) => a.id === first.id);
    expect(log.map(({ at: _, ...a }) => a)).toEqual([1, 2, 3].map((attempt) => ({
      id: first.id,
      type: "lead.created",
      url: `${receiver.url}/all`,
      attempt,
      status: attempt < 3 ? 503 : 204,
      error: attempt < 3 ? "answered 503: not now" : null,
    })));
    const times = log.map((a) => Date.parse(a.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // --since leaves out what came before.
    const since = await webhooksLog(sys, "--since", log[2].at);
    expect(since.every((a) => Date.parse(a.at) >= times[2])).toBe(true);
    expect(since.some((a) => a.id === first.id && a.attempt === 3)).toBe(true);
    expect(since.some((a) => a.id === first.id && a.attempt === 1)).toBe(false);
  });

  it("tells of a post scheduled ahead within 5 s of its time, once, as last imported", async () => {
    const at = (ms: number) => new Date(clock.now() + ms).toISOString();
    const post = (slug: string, publishedAt: string, status = "published") => ({
      slug,
      status,
      publishedAt,
      title: { en: slug },
      body: { en: `<p>${slug}</p>` },
    });
    const scheduled = structuredClone(manifest);
    const moved = at(40 * SECOND);
    scheduled.posts.push(
      post("ahead", at(10 * SECOND)),
      post("later", at(20 * SECOND)),
      post("gone", at(15 * SECOND)),
    );
    await importIt(scheduled);
    // A re-import moves one post, unschedules another and drops the third.
    const rescheduled = structuredClone(manifest);
    rescheduled.posts.push(post("ahead", moved), post("later", at(20 * SECOND), "draft"));
    await importIt(rescheduled);
    clock.advance(30 * SECOND);
    await sleep(2500);
    expect(receiver.of("post.published")).toEqual([]);
    clock.advance(10 * SECOND);
    const due = performance.now();
    const [message] = await receiver.waitFor((d) => d.type === "post.published");
    expect(message.arrivedAt - due).toBeLessThan(5 * SECOND);
    expect(message.body.data).toEqual({ siteId: "demo", slug: "ahead", publishedAt: moved });
    expect(message.body.timestamp).toBe(moved);
    // The same import again keeps nothing new scheduled, and the post is told of once.
    await importIt(rescheduled);
    clock.advance(60 * SECOND);
    await sleep(2000);
    expect(receiver.of("post.published")).toHaveLength(1);
  });

  it("lists the webhooks in export-site without their secrets", async () => {
    const run = await runAdmin(["export-site", "demo"], adminEnv(sys));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).webhooks).toEqual([{ url: `${receiver.url}/all`, events: ALL }]);
    expect(run.stdout).not.toContain(WEBHOOK_SECRET);
    expect(run.stdout).not.toContain(WEBHOOK_SECRET.slice("whsec_".length));
  });
});

describe("webhooks without WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_INSECURE", () => {
  let receiver: Receiver;
  let sys: TestSystem;

  beforeAll(async () => {
    receiver = startReceiver(WEBHOOK_SECRET);
    sys = await startTestSystem({});
  });

  afterAll(async () => {
    await sys?.close();
    await receiver?.close();
  });

  it("refuses an http URL in the manifest, naming its path, and stores nothing", async () => {
    const manifest = await analyticsManifest();
    manifest.webhooks = [{ url: `${receiver.url}/x`, events: ALL, secret: WEBHOOK_SECRET }];
    await expect(importManifest(sys.system.admin, JSON.stringify(manifest))).rejects.toMatchObject({
      path: "$.webhooks[0].url",
      problem: "must be an https URL (http only while WEBHOOK_ALLOW_INSECURE=1)",
    });
    const exported = await runAdmin(["export-site", "demo"], adminEnv(sys));
    expect(exported.code).not.toBe(0);
  });

  it("never connects to a loopback address, and logs the refusal", async () => {
    const manifest = await analyticsManifest();
    const port = new URL(receiver.url).port;
    manifest.webhooks = [
      { url: `https://127.0.0.1:${port}/x`, events: ALL, secret: WEBHOOK_SECRET },
      { url: `https://localhost:${port}/y`, events: ["content.published"], secret: WEBHOOK_SECRET },
    ];
    await importManifest(sys.system.admin, JSON.stringify(manifest));
    await loggedAttempt(sys, (a) => a.url.endsWith("/x"));
    await loggedAttempt(sys, (a) => a.url.endsWith("/y"));
    const log = await webhooksLog(sys);
    expect(log.map((a) => [a.url, a.attempt, a.status, a.error]).sort()).toEqual([
      [`https://127.0.0.1:${port}/x`, 1, null, "refused: address 127.0.0.1 is loopback"],
      [
        `https://localhost:${port}/y`,
        1,
        null,
        expect.stringMatching(/^refused: localhost: address \S+ is loopback$/),
      ],
    ]);
    expect(receiver.deliveries).toEqual([]);
  });
});
