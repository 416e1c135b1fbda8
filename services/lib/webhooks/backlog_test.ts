/**
 * The backlog's figures (backlog.ts) on each storage, against content's
 * outbox: what counts as undelivered, the oldest message's age, and how
 * long a due delivery not being attempted has waited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../db/mod.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import { STORAGES } from "../../../test/helpers/env.ts";
import { migrate } from "../db/migrate.ts";
import { CONTENT_SCHEMA, contentMigrations } from "../../content/migrations/mod.ts";
import { enqueueMessages, newMessageId, syncWebhooks } from "./outbox.ts";
import { readBacklog } from "./backlog.ts";

const S = CONTENT_SCHEMA;
const T0 = Date.parse("2026-05-01T10:00:00Z");
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(STORAGES)("the webhook backlog on %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    db = fresh.db;
    await migrate(db, S, contentMigrations);
    await db.transaction((tx) =>
      syncWebhooks(tx, S, {
        siteId: "s1",
        webhooks: [
          { url: "https://a.example/hook", events: ["lead.created"], secret: "whsec_" + btoa("a") },
          { url: "https://b.example/hook", events: ["lead.created"], secret: "whsec_" + btoa("b") },
        ],
        now: 0,
      })
    );
  });

  afterAll(() => fresh?.drop());

  const enqueue = (createdAt: number) =>
    db.transaction((tx) =>
      enqueueMessages(tx, S, {
        messages: [{
          id: newMessageId(),
          siteId: "s1",
          type: "lead.created",
          occurredAt: createdAt,
          data: "{}",
        }],
        createdAt,
      })
    );

  it("is empty for an outbox with nothing waiting", async () => {
    expect(await readBacklog(db, S, T0)).toEqual({ pending: 0, oldestAgeS: 0, overdueS: 0 });
  });

  it("counts every undelivered delivery, ages the oldest message and times the most overdue", async () => {
    // Two messages, each to both webhooks: four deliveries due when enqueued.
    await enqueue(T0);
    await enqueue(T0 + 10 * MINUTE);
    const at = T0 + 30 * MINUTE;
    expect(await readBacklog(db, S, at)).toEqual({
      pending: 4,
      oldestAgeS: 1800,
      overdueS: 1800,
    });
    // The oldest message's deliveries: one delivered, one waiting for a retry in an hour.
    const [oldest] = await db.query<{ id: string }>(
      `select id from ${S}.webhook_messages order by created_at limit 1`,
    );
    await db.query(
      `update ${S}.webhook_deliveries set state = 'delivered'
        where message_id = $1 and url = 'https://a.example/hook'`,
      [oldest.id],
    );
    await db.query(
      `update ${S}.webhook_deliveries set next_at = $2
        where message_id = $1 and url = 'https://b.example/hook'`,
      [oldest.id, iso(at + 60 * MINUTE)],
    );
    // Still undelivered, so the oldest message's age stands; the overdue is the newer's 20 min.
    expect(await readBacklog(db, S, at)).toEqual({
      pending: 3,
      oldestAgeS: 1800,
      overdueS: 1200,
    });
    // Being attempted (a live lease) is not overdue.
    await db.query(`update ${S}.webhook_deliveries set lease_until = $1 where next_at <= $2`, [
      iso(at + MINUTE),
      iso(at),
    ]);
    expect((await readBacklog(db, S, at)).overdueS).toBe(0);
    // Given up (failed) is not undelivered either.
    await db.query(`update ${S}.webhook_deliveries set state = 'failed'`);
    expect(await readBacklog(db, S, at)).toEqual({ pending: 0, oldestAgeS: 0, overdueS: 0 });
  });
});
