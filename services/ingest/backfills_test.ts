import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INGEST_BACKFILLS } from "./backfills.ts";
import { backfillStates, runBackfills } from "../lib/db/backfill.ts";
import { ManualClock } from "../lib/clock.ts";
import { STORAGES } from "../../test/helpers/env.ts";
import type { FreshDatabase } from "../../test/helpers/storage.ts";
import { databaseWithTraffic } from "../../test/helpers/stats_traffic.ts";

const FROM = Date.parse("2026-10-01T00:00:00Z");

describe.each(STORAGES)("the page backfills on %s", (storage) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: "bf",
      fromMs: FROM,
      toMs: FROM + 3 * 86_400_000,
      pageViews: 300,
      eventsPerView: 0.5,
    });
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  const missing = async (table: string) => {
    const [row] = await fresh.db.query<{ n: number }>(
      `select count(*)::int as n from ingest.${table} where page is distinct from ingest.url_path(url)`,
    );
    return row.n;
  };

  it("fill the page of rows stored without one, and only theirs", async () => {
    // Rows as an older release stored them: no page (all but the first day's).
    const second = new Date(FROM + 86_400_000).toISOString();
    for (const table of ["page_views", "events"]) {
      await fresh.db.query(
        `update ingest.${table} set page = null where received_at >= $1::timestamptz`,
        [second],
      );
      expect(await missing(table), table).toBeGreaterThan(0);
    }
    // A row whose page was stored differently keeps it: a batch fills only empty ones.
    await fresh.db.query(
      `update ingest.page_views set page = '/kept' where received_at < $1::timestamptz
        and ctid = (select min(ctid) from ingest.page_views where received_at < $1::timestamptz)`,
      [second],
    );
    const emptyViews = (await fresh.db.query<{ n: number }>(
      "select count(*)::int as n from ingest.page_views where page is null",
    ))[0].n;
    const stop = new AbortController();
    let batches = 0;
    await runBackfills(fresh.db, "ingest", INGEST_BACKFILLS, stop.signal, {
      clock: new ManualClock(FROM + 10 * 86_400_000),
      sleep: () => Promise.resolve(void batches++),
    });
    expect(await missing("page_views")).toBe(1);
    expect(await missing("events")).toBe(0);
    const states = await backfillStates(fresh.db, "ingest");
    expect(states.map((s) => s.name)).toEqual(["events_page", "page_views_page"]);
    const views = states.find((s) => s.name === "page_views_page")!;
    expect(views).toMatchObject({ doneRows: emptyViews, totalRows: emptyViews });
    expect(views.finishedAt).toBeDefined();
    // About two days of hour-long batches for each table.
    expect(batches).toBeGreaterThan(24);
  });
});
