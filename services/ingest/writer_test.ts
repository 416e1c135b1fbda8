/**
 * The writer's statements are prepared once per connection (their text is
 * fixed; rows travel as JSON parameters), on Postgres where that matters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL } from "../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { migrate } from "../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";
import { Partitions } from "./partitions.ts";
import { writeGroup } from "./writer.ts";
import { generateVisits } from "../../test/helpers/generated_traffic.ts";

describe.runIf(DATABASE_URL)("the writer on Postgres", () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase("postgres", { migrated: true });
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
  it("ends the transaction with its last statement, with upkeep or without", async () => {
    const from = Date.parse("2026-10-02T00:00:00Z");
    await new Partitions(fresh.db).ensure([from]);
    const items = [...generateVisits({
      siteId: "last",
      fromMs: from,
      toMs: from + 3_600_000,
      pageViews: 30,
      eventsPerView: 1,
      seed: 5,
    })].flat();
    // Events alone, each with an id, as servers send them.
    const events = items.flatMap((item, i) =>
      item.kind === "event" ? [{ ...item, row: { ...item.row, event_id: `e${i}` } }] : []
    );
    const views = items.filter((item) => item.kind === "view");
    expect(events.length).toBeGreaterThan(10);
    expect(views.length).toBeGreaterThan(10);
    const half = Math.floor(events.length / 2);
    const write = (group: typeof items, upkeep: boolean) =>
      fresh.db.transaction((tx) => writeGroup(tx, group, { upkeep, endsTransaction: true }));
    const stored = async () =>
      (await fresh.db.query<{ n: number }>(
        "select count(*)::int as n from ingest.events where site_id = 'last'",
      ))[0].n;
    // The events' statement is the last without upkeep; the changes' with it.
    expect((await write(events.slice(0, half), false)).every((r) => !r.duplicate)).toBe(true);
    expect((await write(events.slice(half), true)).every((r) => !r.duplicate)).toBe(true);
    expect(await stored()).toBe(events.length);
    // Every event again, among page views: each answered as a duplicate, none stored twice.
    const again = await write([...views, ...events], true);
    expect(again.slice(views.length).every((r) => r.duplicate)).toBe(true);
    expect(again.slice(0, views.length).every((r) => !r.duplicate)).toBe(true);
    expect(await stored()).toBe(events.length);
    const [{ n }] = await fresh.db.query<{ n: number }>(
      "select coalesce(sum(events), 0)::int as n from ingest.visits where site_id = 'last'",
    );
    // Counted once in their visits: the half written with upkeep.
    expect(n).toBe(events.length - half);
  });
});
