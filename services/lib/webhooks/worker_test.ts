/**
 * The delivery worker on each storage, against an outbox of its own schema:
 * attempts per URL, leases of a worker that died, and two workers on one
 * outbox. A receiver on the loopback holds its answers while the test counts
 * what is in flight.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../clock.ts";
import { createLogger } from "../log.ts";
import type { Database } from "../db/mod.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import { STORAGES } from "../../../test/helpers/env.ts";
import { enqueueMessages, newMessageId, syncWebhooks } from "./outbox.ts";
import { migrate } from "../db/migrate.ts";
import { CONTENT_SCHEMA, contentMigrations } from "../../content/migrations/mod.ts";
import { LEASE_MS, messageBody, PER_URL, WebhookWorker } from "./worker.ts";

/** The outbox as content-service's migrations make it. */
const SCHEMA = CONTENT_SCHEMA;
const SECRET = "whsec_" + btoa("k".repeat(24));
const quiet = createLogger("error", {}, () => {});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000) {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`never: ${what}`);
    await sleep(20);
  }
}

describe.each(STORAGES)("WebhookWorker on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;
  const clock = new ManualClock(Date.parse("2026-05-01T10:00:00Z"));
  /** Bodies received by id, and answers held until released. */
  const received: { id: string; attempt: string; body: string; path: string }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let hold = false;
  const waiting: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    received.push({
      id: req.headers.get("webhook-id")!,
      attempt: req.headers.get("webhook-timestamp")!,
      body: await req.text(),
      path: new URL(req.url).pathname,
    });
    if (hold && new URL(req.url).pathname === "/hook") {
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    inFlight--;
    return new Response(null, { status: 204 });
  });
  const url = `http://127.0.0.1:${server.addr.port}/hook`;
  /** A second webhook, for content.published only, never held. */
  const other = `http://127.0.0.1:${server.addr.port}/free`;
  const release = () => waiting.splice(0).forEach((go) => go());
  const worker = () =>
    new WebhookWorker({
      db,
      schema: SCHEMA,
      clock,
      log: quiet,
      settings: { allowPrivate: true, allowInsecure: true },
      pollMs: 100,
    });

  afterAll(async () => {
    hold = false;
    release();
    await server.shutdown();
    await fresh?.drop();
  });

  beforeEach(async () => {
    fresh ??= await freshDatabase(storage, { migrated: true });
    db = fresh.db;
    await db.exec(`drop schema if exists ${SCHEMA} cascade`);
    await migrate(db, SCHEMA, contentMigrations);
    await db.exec(`delete from ${SCHEMA}.webhook_messages`);
    await db.transaction((tx) =>
      syncWebhooks(tx, SCHEMA, {
        siteId: "s1",
        webhooks: [
          { url, events: ["lead.created"], secret: SECRET },
          { url: other, events: ["content.published"], secret: SECRET },
        ],
        now: 0,
      })
    );
    received.length = 0;
    inFlight = 0;
    maxInFlight = 0;
  });

  async function enqueue(n: number, type: "lead.created" | "content.published" = "lead.created") {
    const ids = Array.from({ length: n }, () => newMessageId());
    await db.transaction((tx) =>
      enqueueMessages(tx, SCHEMA, {
        messages: ids.map((id, i) => ({
          id,
          siteId: "s1",
          type,
          occurredAt: clock.now(),
          data: JSON.stringify({ siteId: "s1", n: i }),
        })),
        createdAt: clock.now(),
      })
    );
    return ids;
  }

  it("stores nothing for a type no webhook names", async () => {
    const stored = await db.transaction((tx) =>
      enqueueMessages(tx, SCHEMA, {
        messages: [{
          id: newMessageId(),
          siteId: "s1",
          type: "post.published",
          occurredAt: clock.now(),
          data: "{}",
        }],
        createdAt: clock.now(),
      })
    );
    expect(stored).toBe(0);
    const [{ n }] = await db.query<{ n: number }>(
      `select count(*)::int as n from ${SCHEMA}.webhook_messages`,
    );
    expect(n).toBe(0);
  });

  it(`makes at most ${PER_URL} attempts to one URL at once`, async () => {
    hold = true;
    const ids = await enqueue(8);
    const w = worker();
    w.start();
    try {
      await until(() => received.length === PER_URL, `${PER_URL} attempts in flight`);
      await sleep(400); // several polls: none more goes out while those are held
      expect(received).toHaveLength(PER_URL);
      hold = false;
      release();
      await until(() => received.length === 8, "every message delivered");
      expect(maxInFlight).toBeLessThanOrEqual(PER_URL);
      expect(new Set(received.map((r) => r.id))).toEqual(new Set(ids));
      const bodies = received.map((r) => JSON.parse(r.body));
      expect(bodies.every((b) => b.type === "lead.created")).toBe(true);
    } finally {
      hold = false;
      release();
      await w.close();
    }
  });

  it("lets no URL's backlog keep another URL waiting", async () => {
    hold = true;
    await enqueue(100);
    const w = worker();
    w.start();
    try {
      await until(() => received.length === PER_URL, "the held URL busy");
      // Due after every one of the backlog.
      clock.advance(1);
      const [elsewhere] = await enqueue(1, "content.published");
      w.nudge();
      await until(() => received.some((r) => r.id === elsewhere), "the other URL served");
      expect(received.find((r) => r.id === elsewhere)?.path).toBe("/free");
      expect(received.filter((r) => r.path === "/hook")).toHaveLength(PER_URL);
    } finally {
      hold = false;
      release();
      await w.close();
    }
  });

  it("leaves a delivery leased by a worker that died alone until its lease ends", async () => {
    const [id] = await enqueue(1);
    // What a worker killed mid-attempt leaves: attempt 1 claimed, its lease running.
    await db.query(
      `update ${SCHEMA}.webhook_deliveries
          set attempts = 1, lease = 'dead', lease_until = $1, first_attempt_at = $2`,
      [new Date(clock.now() + LEASE_MS).toISOString(), new Date(clock.now()).toISOString()],
    );
    const w = worker();
    w.start();
    try {
      await sleep(500);
      expect(received).toEqual([]);
      clock.advance(LEASE_MS);
      await until(() => received.length === 1, "the attempt made again");
      expect(received[0].id).toBe(id);
      await until(async () => {
        const rows = await db.query<{ state: string; attempts: number }>(
          `select state, attempts from ${SCHEMA}.webhook_deliveries`,
        );
        return rows[0].state === "delivered" && rows[0].attempts === 2;
      }, "delivered at attempt 2");
      const log = await db.query<{ attempt: number; status: number }>(
        `select attempt, status from ${SCHEMA}.webhook_attempts`,
      );
      expect(log).toEqual([{ attempt: 2, status: 204 }]);
    } finally {
      await w.close();
    }
  });

  it("with two workers on one outbox, delivers every message once", async () => {
    const ids = await enqueue(20);
    const workers = [worker(), worker()];
    for (const w of workers) w.start();
    try {
      await until(() => received.length >= 20, "every message delivered");
      await sleep(500);
      expect(received.map((r) => r.id).sort()).toEqual([...ids].sort());
    } finally {
      for (const w of workers) await w.close();
    }
  });

  it("keeps the stored data text as the body's data, byte for byte", () => {
    const data = '{"siteId":"s1","fields":{"2":"b","1":"a"}}';
    const body = messageBody("lead.created", Date.parse("2026-05-01T10:00:00Z"), data);
    expect(body).toBe(
      `{"type":"lead.created","timestamp":"2026-05-01T10:00:00.000Z","data":${data}}`,
    );
  });
});
