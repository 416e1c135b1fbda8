/**
 * The writer's statements are prepared once per connection (their text is
 * fixed; rows travel as JSON parameters), on Postgres where that matters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL } from "../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { migrate } from "../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations.ts";
import { Partitions } from "./partitions.ts";
import { writeGroup } from "./writer.ts";
import { generateVisits } from "./stats/generated.ts";

describe.runIf(DATABASE_URL)("the writer on Postgres", () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase("postgres");
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("prepares each of its statements on the connection, once", async () => {
    const from = Date.parse("2026-10-01T00:00:00Z");
    await new Partitions(fresh.db).ensure([from]);
    const visits = [
      ...generateVisits({
        siteId: "prepared",
        fromMs: from,
        toMs: from + 3_600_000,
        pageViews: 40,
        eventsPerView: 0.5,
        seed: 3,
      }),
    ];
    const items = visits.flat();
    const half = Math.floor(items.length / 2);
    const statements = await fresh.db.transaction(async (tx) => {
      await writeGroup(tx, items.slice(0, half));
      await writeGroup(tx, items.slice(half));
      return await tx.query<{ statement: string; calls: number }>(
        `select statement, (generic_plans + custom_plans)::int as calls
           from pg_prepared_statements`,
      );
    });
    const texts = statements.map((s) => s.statement);
    for (const table of ["ingest.page_views", "ingest.events", "ingest.sessions"]) {
      expect(texts.some((t) => t.includes(`insert into ${table}`)), table).toBe(true);
    }
    expect(texts.some((t) => t.includes("ingest.stat_day_changes"))).toBe(true);
    // The same text is one statement, run by both groups.
    expect(new Set(texts).size).toBe(texts.length);
    expect(statements.some((s) => s.calls >= 2)).toBe(true);
  });
});
