/**
 * A visit crossing local midnight, asked for its first day by exit page, on
 * every storage and every way the engine answers: it counts under its last
 * page view of that day, and its later exit page, which no row of that day
 * has, is no combination of the answer, whether visits are asked or only
 * its rows. The reference engine agrees.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import { answersOf } from "../../../test/helpers/stats_traffic.ts";
import { migrate } from "../../lib/db/migrate.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../migrations/mod.ts";
import { parseHistoryLine, storeHistory } from "../history.ts";
import { Partitions } from "../partitions.ts";
import { buildRollups, rollupSite } from "./rollups.ts";

const SITE = "exits";
const ZONE = "Europe/Berlin";
const NOW = Date.parse("2026-06-10T12:00:00Z");

/** Page views of one visit (Berlin is UTC+2 in June): 23:40 and 23:50, then 00:10 the next day. */
const VISIT = [
  ["2026-06-02T21:40:00Z", "/pricing"],
  ["2026-06-02T21:50:00Z", "/signup"],
  ["2026-06-02T22:10:00Z", "/thanks"],
];

describe.each(STORAGES)("a visit crossing midnight by exit page, %s", (storage) => {
  let fresh: FreshDatabase;

  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    const { db } = fresh;
    await migrate(db, INGEST_SCHEMA, ingestMigrations);
    await db.query("insert into ingest.sites (site_id, time_zone) values ($1, $2)", [SITE, ZONE]);
    const target = { siteId: SITE, types: new Map(), nowMs: NOW };
    const records = VISIT.map(([at, path], i) =>
      parseHistoryLine(
        JSON.stringify({
          kind: "pageview",
          url: `https://exits.example${path}`,
          visitorId: "v1",
          sessionId: "s1",
          receivedAt: at,
        }),
        i + 1,
        target,
      )
    );
    await storeHistory(db, records, new Partitions(db));
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  const ask = async (body: Record<string, Json>) => {
    const answer = await answersOf(fresh.db, SITE, body, ZONE, { totals: true });
    expect(answer.engine, `${answer.path}: ${JSON.stringify(body)}`).toEqual(answer.reference);
    return answer;
  };
  const rows = (answer: Awaited<ReturnType<typeof ask>>) =>
    answer.engine.rows.map((r) => [...r.dims, ...r.metrics]);

  it("lists only the exit page of the day asked, from the rows, the rollups and the visits", async () => {
    const firstDay = {
      metrics: ["visits", "pageviews"],
      dimensions: ["visit:exit_page"],
      date_range: ["2026-06-02", "2026-06-02"],
    };
    const byDay = {
      metrics: ["visits", "pageviews", "visitors"],
      dimensions: ["time:day", "visit:exit_page"],
      date_range: ["2026-06-02", "2026-06-03"],
    };
    const withHour = { ...firstDay, dimensions: ["visit:exit_page", "time:hour"] };
    // No visit metric: the rows still count under the exit page of the day asked.
    const rowsOnly = { ...firstDay, metrics: ["pageviews", "visitors"] };
    const paths: string[] = [];
    const check = async () => {
      const first = await ask(firstDay);
      paths.push(first.path);
      expect(rows(first)).toEqual([["/signup", 1, 2]]);
      const pages = await ask(rowsOnly);
      paths.push(pages.path);
      expect(rows(pages)).toEqual([["/signup", 2, 1]]);
      expect(rows(await ask(byDay))).toEqual([
        ["2026-06-02", "/thanks", 1, 2, 1],
        ["2026-06-03", "/thanks", 0, 1, 1],
      ]);
      const hours = await ask(withHour);
      paths.push(hours.path);
      expect(rows(hours)).toEqual([
        ["/signup", "2026-06-02T23:00:00+02:00", 1, 2],
      ]);
    };
    await check();
    const site = (await rollupSite(fresh.db, SITE))!;
    expect((await buildRollups(fresh.db, site, NOW)).built).toBeGreaterThan(0);
    await check();
    expect(new Set(paths)).toEqual(new Set(["rollups and rows", "rollups", "visits"]));
  });
});
