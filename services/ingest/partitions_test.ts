/**
 * The partitions of page views and events on every storage: the months
 * ahead made and counted, months made for any time asked, the catalogue
 * consulted when asked to (another replica's retention may have dropped a
 * month this one made), and a failure told at warn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { captureLog } from "../../test/helpers/log_capture.ts";
import { migrate } from "../lib/db/migrate.ts";
import { ManualClock } from "../lib/clock.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";
import { listPartitions, monthOf, Partitions } from "./partitions.ts";

const NOW = Date.parse("2026-11-28T12:00:00Z");

/** "table YYYY-MM" of every partition stored. */
async function stored(fresh: FreshDatabase): Promise<string[]> {
  return (await listPartitions(fresh.db)).map((p) =>
    `${p.table} ${new Date(p.from).toISOString().slice(0, 7)}`
  );
}

describe("monthOf", () => {
  it("gives a time's UTC month, its first instant and the next month's", () => {
    expect(monthOf(Date.parse("2026-12-31T23:59:59.999Z"))).toEqual({
      key: "2026_12",
      from: Date.parse("2026-12-01T00:00:00Z"),
      to: Date.parse("2027-01-01T00:00:00Z"),
    });
  });
});

describe.each(STORAGES)("partitions, %s", (storage) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("makes this month and the next three ahead, and counts the months ahead as time passes", async () => {
    const clock = new ManualClock(NOW);
    const partitions = new Partitions(fresh.db, { clock });
    expect(partitions.monthsAhead()).toBeUndefined();
    await partitions.ensureAhead(clock.now());
    const months = await stored(fresh);
    for (const month of ["2026-11", "2026-12", "2027-01", "2027-02"]) {
      expect(months).toContain(`page_views ${month}`);
      expect(months).toContain(`events ${month}`);
    }
    expect(months).not.toContain("page_views 2027-03");
    expect(partitions.monthsAhead()).toBe(3);
    clock.set(Date.parse("2027-01-01T00:00:00Z"));
    expect(partitions.monthsAhead()).toBe(1);
    await partitions.ensureAhead(clock.now());
    expect(partitions.monthsAhead()).toBe(3);
    partitions.close();
  });

  it("makes the month of any time asked for, a year back too", async () => {
    const partitions = new Partitions(fresh.db);
    await partitions.ensure([
      Date.parse("2025-11-27T12:00:00Z"),
      Date.parse("2026-03-01T00:00:00Z"),
    ]);
    const months = await stored(fresh);
    for (const month of ["2025-11", "2026-03"]) {
      expect(months).toContain(`page_views ${month}`);
      expect(months).toContain(`events ${month}`);
    }
    expect(months).not.toContain("page_views 2025-12");
    partitions.close();
  });

  it("looks in the catalogue when told to, for a month another replica dropped", async () => {
    const here = new Partitions(fresh.db);
    const january = Date.parse("2025-01-15T00:00:00Z");
    await here.ensure([january]);
    // Retention on another replica drops the month; this one still knows it as made.
    await fresh.db.exec("drop table ingest.page_views_p2025_01");
    await here.ensure([january]);
    expect(await stored(fresh)).not.toContain("page_views 2025-01");
    await here.ensure([january], { verify: true });
    expect(await stored(fresh)).toContain("page_views 2025-01");
    here.close();
  });

  it("tells a failure at warn and throws it, and counts no month ahead it could not make", async () => {
    const other = await freshDatabase(storage); // never migrated: no tables to partition
    try {
      const captured = captureLog();
      const partitions = new Partitions(other.db, {
        log: captured.log,
        clock: new ManualClock(NOW),
      });
      await expect(partitions.ensureAhead(NOW)).rejects.toThrow(/ingest/);
      const [line] = captured.find("partitions not made");
      expect(line).toMatchObject({
        level: "warn",
        months: ["2026_11", "2026_12", "2027_01", "2027_02"],
      });
      expect(partitions.monthsAhead()).toBe(0);
      partitions.close();
    } finally {
      await other.drop();
    }
  });
});
