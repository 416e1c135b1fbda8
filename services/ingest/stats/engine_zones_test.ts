/**
 * The engine against the stored rows in four zones, on each storage (see
 * below): generated traffic written through the writer (helpers/
 * engine_questions.ts), then every query answered by the engine (ingest.visits,
 * the rows, the rollups, and rollups beside days not built) and by the
 * reference engine, in UTC, Kathmandu (+05:45), New York on its 25-hour day
 * and Sydney on its 23-hour day, must agree exactly. Storage, zone, range,
 * rollups and query are asked in all pairs rather than every combination.
 * Like the integration files it runs on one storage in `deno task test` and
 * on the other in `deno task test:system` (SYSTEM_STORAGES), each time with
 * all pairs of the rest. engine_test.ts changes the rows and asks again.
 */
import { describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "../../../test/helpers/env.ts";
import { allPairs } from "../../../test/helpers/pairwise.ts";
import {
  answersOf,
  setZone,
  TEST_ZONES,
  TRAFFIC_QUERY,
} from "../../../test/helpers/stats_traffic.ts";
import {
  add,
  build,
  compareAll,
  engineDatabase,
  indices,
  MONTH,
  QUERIES,
  RANGES,
  SITE,
} from "../../../test/helpers/engine_questions.ts";

/**
 * The questions: storage, zone, range, rollups built or not
 * and query, all pairs of them (test/helpers/pairwise.ts) instead of every
 * combination, so each query meets each zone, each range, each storage and
 * both states of the rollups.
 */
const ZONE_PLAN = allPairs(
  {
    storage: SYSTEM_STORAGES,
    zone: TEST_ZONES,
    range: ["month", "short"],
    rollups: ["without", "with"],
    query: indices(QUERIES.length),
  },
  (row) => row.zone === undefined || row.range !== "short" || RANGES[row.zone].short !== undefined,
);

describe.each(SYSTEM_STORAGES)("the engine on %s", (storage) => {
  const engine = engineDatabase(storage);

  it("answers every query as the stored rows do, with and without rollups", async () => {
    const { db } = engine;
    const known = new Map<string, unknown>();
    const mine = ZONE_PLAN.filter((row) => row.storage === storage);
    const before: Record<string, number> = {};
    const after: Record<string, number> = {};
    for (const zone of TEST_ZONES) {
      await db.exec("delete from ingest.rollup_periods");
      const asked = (rollups: string) =>
        mine.filter((row) => row.zone === zone && row.rollups === rollups);
      const without = await compareAll(db, zone, asked("without"), known);
      expect(without.rollups, zone).toBeUndefined();
      add(before, without);
      expect(await build(db)).toBeGreaterThan(30);
      add(after, await compareAll(db, zone, asked("with"), known));
    }
    // A range of a few days is worked out from the rows as rollups would hold them.
    expect(before["rollups and rows"]).toBeGreaterThan(0);
    expect(after.rollups).toBeGreaterThan(5);
    await setZone(db, SITE, "UTC");
    await build(db);
    const sample = await answersOf(db, SITE, { ...TRAFFIC_QUERY, date_range: MONTH }, "UTC", {});
    expect(sample.path).toBe("rollups");
    expect(sample.reference.rows.length).toBeGreaterThan(50);
    const byPlan = await answersOf(db, SITE, { ...QUERIES[27], date_range: MONTH }, "UTC", {});
    expect(byPlan.reference.rows.length).toBeGreaterThan(3); // free, pro, team, none
  }, 600_000);
});
