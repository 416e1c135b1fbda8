/**
 * Migration 6 ("visit slices carry their visit's attributes") on a database
 * that holds rows from before the derived tables: migrations 4 (the derived
 * tables, backfilled as they were then) and 6 (the slices' attributes, from
 * ingest.visits) must leave exactly what the rebuild derives from the rows
 * with today's code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import { migrate } from "../../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../migrations.ts";
import { outboxTablesSql } from "../../lib/webhooks/outbox.ts";
import { Partitions } from "../partitions.ts";
import { writeGroup } from "../writer.ts";
import { generateVisits, inGroups } from "./generated.ts";
import { rebuildSite } from "./derived.ts";

const SITE = "migrated";
const FROM = Date.parse("2026-10-01T00:00:00Z");
const TO = Date.parse("2026-10-08T00:00:00Z");

describe.each(STORAGES)("migration 6 on %s", (storage) => {
  let fresh: FreshDatabase;

  beforeAll(async () => {
    fresh = await freshDatabase(storage);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("gives the slices the attributes the rows give them", async () => {
    const { db } = fresh;
    const derivedTables = ingestMigrations.find((m) => m.name === "derived tables of the reports")!
      .version;
    const attributed = ingestMigrations.find((m) =>
      m.name === "visit slices carry their visit's attributes"
    )!.version;
    await migrate(db, INGEST_SCHEMA, ingestMigrations.filter((m) => m.version < derivedTables));
    await new Partitions(db).ensure([FROM, TO]);
    const visits = generateVisits({
      siteId: SITE,
      fromMs: FROM,
      toMs: TO,
      pageViews: 600,
      eventsPerView: 0.3,
      seed: 5,
    });
    // Rows only: the derived tables do not exist yet. Today's writer stores each row's page
    // (migration 7), so the column is there while it writes and gone again after, as then.
    const pageTables = ["ingest.page_views", "ingest.events"];
    for (const t of pageTables) await db.exec(`alter table ${t} add column page text`);
    // It also enqueues lead.created (migration 17): the outbox is there while it writes too.
    await db.exec(outboxTablesSql(INGEST_SCHEMA));
    for (const group of inGroups(visits, 100)) {
      await db.transaction((tx) => writeGroup(tx, group, false));
    }
    for (const t of pageTables) await db.exec(`alter table ${t} drop column page`);
    await db.exec(
      `drop table ingest.webhook_attempts, ingest.webhook_deliveries, ingest.webhook_messages,
                  ingest.webhooks`,
    );
    await migrate(db, INGEST_SCHEMA, ingestMigrations.filter((m) => m.version < attributed));
    const [before] = await db.query<{ n: number }>(
      "select count(*)::int as n from ingest.visit_slices where site_id = $1",
      [SITE],
    );
    expect(before.n).toBeGreaterThan(100);
    await migrate(db, INGEST_SCHEMA, ingestMigrations);
    const [filled] = await db.query<{ n: number }>(
      `select count(*)::int as n from ingest.visit_slices
        where site_id = $1 and entry_page is not null`,
      [SITE],
    );
    expect(filled.n).toBeGreaterThan(100);
    // Migration 9 takes each site's longest visit from its visits.
    const [span] = await db.query<{ stored: string; longest: string }>(
      `select (select longest::text from ingest.visit_spans where site_id = $1) as stored,
              (select max(last_seen - first_seen)::text from ingest.visits where site_id = $1)
                as longest`,
      [SITE],
    );
    expect(span.longest).not.toBe("00:00:00");
    expect(span.stored).toBe(span.longest);
    const changes = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(changes.map((c) => [c.table, c.added, c.removed, c.changed])).toEqual([
      ["ingest.stat_counters", 0, 0, 0],
      ["ingest.stat_counter_days", 0, 0, 0],
      ["ingest.visit_slices", 0, 0, 0],
      ["ingest.visits", 0, 0, 0],
    ]);
  }, 120_000);
});
