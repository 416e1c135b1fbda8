/**
 * Retention's upkeep on every storage: the month the cutoff falls in is
 * trimmed through an index leading with received_at (every partition has
 * one, those made later too), and the time of the last successful run is
 * recorded for the gauge crm.ingest.retention.last_success.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { migrate } from "../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";
import { listPartitions, Partitions } from "./partitions.ts";
import { lastRetentionSuccess, RetentionRecord, runRetention } from "./retention.ts";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const DAY_MS = 86_400_000;

describe.each(STORAGES)("retention's upkeep, %s", (storage) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("has an index leading with received_at on every partition, those made later too", async () => {
    await new Partitions(fresh.db).ensureAhead(NOW);
    // A month made after the others, as an import of old history makes it.
    await new Partitions(fresh.db).ensure([NOW - 400 * DAY_MS]);
    const partitions = await listPartitions(fresh.db);
    expect(partitions.length).toBe(10);
    for (const { name } of partitions) {
      const leading = await fresh.db.query(
        `select x.indexrelid
           from pg_index x
           join pg_class t on t.oid = x.indrelid
           join pg_namespace n on n.oid = t.relnamespace
           join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
          where n.nspname = 'ingest' and t.relname = $1 and a.attname = 'received_at'`,
        [name],
      );
      expect(leading.length, name).toBeGreaterThan(0);
    }
  });

  it("records the time of the last successful run, and the gauge's record reads it", async () => {
    const record = new RetentionRecord(fresh.db);
    await record.refresh();
    expect(record.lastSuccessMs).toBeUndefined();
    expect(await lastRetentionSuccess(fresh.db)).toBeUndefined();
    const partitions = new Partitions(fresh.db);
    await runRetention(fresh.db, { partitions, retentionDays: 395, now: NOW });
    expect(await lastRetentionSuccess(fresh.db)).toBe(NOW);
    await runRetention(fresh.db, { partitions, retentionDays: 395, now: NOW + DAY_MS });
    expect(await lastRetentionSuccess(fresh.db)).toBe(NOW + DAY_MS);
    await record.refresh();
    expect(record.lastSuccessMs).toBe(NOW + DAY_MS);
    // A run of this process is noted at once, an earlier time never taken over a later one.
    record.succeeded(NOW + 2 * DAY_MS);
    record.succeeded(NOW);
    expect(record.lastSuccessMs).toBe(NOW + 2 * DAY_MS);
    record.close();
  });
});
