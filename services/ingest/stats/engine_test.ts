/**
 * The engine against the stored rows after they change, on each storage (see
 * below): generated traffic written through the writer (helpers/
 * engine_questions.ts), then late rows, a visitor's deletion, retention and
 * the rebuild, after each of which the engine and the reference engine must
 * agree exactly; and comparisons, time labels and funnels agree too. The
 * questions are asked in all pairs rather than every combination.
 * engine_zones_test.ts asks every query in four zones before any change.
 * Like the integration files it runs on one storage in `deno task test` and
 * on the other in `deno task test:system` (SYSTEM_STORAGES).
 */
import { describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "../../../test/helpers/env.ts";
import { allPairs } from "../../../test/helpers/pairwise.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { funnelBodyOf, queryBodyOf } from "../../lib/stats/wire.ts";
import { deleteVisitor } from "../erase.ts";
import { runRetention } from "../retention.ts";
import { Partitions } from "../partitions.ts";
import { IngestStore } from "../storage.ts";
import { writeGroup } from "../writer.ts";
import { statsEngine } from "./engine.ts";
import { referenceEngine } from "./reference.ts";
import { rebuildSite } from "./visits.ts";
import { StatsAnswerer } from "./service.ts";
import { generateVisits } from "../../../test/helpers/generated_traffic.ts";
import {
  busiestVisitor,
  lateTraffic,
  setZone,
  TRAFFIC_QUERY,
  writeLastRowFirst,
} from "../../../test/helpers/stats_traffic.ts";
import {
  AFTER_CHANGES,
  build,
  compareAll,
  engineDatabase,
  indices,
  MONTH,
  NOW,
  QUERIES,
  type Question,
  SITE,
} from "../../../test/helpers/engine_questions.ts";

/**
 * The checks after the later changes to the rows (more late rows, a deletion,
 * retention): all pairs too. The first, after two days' late rows, asks every
 * query of AFTER_CHANGES over the month on every storage: the month's rollups
 * beside stale days.
 */
const CHANGE_PLAN = allPairs({
  storage: SYSTEM_STORAGES,
  change: [1, 2, 3, 4, 5],
  range: ["month", "short"],
  query: AFTER_CHANGES,
});
const LATE_DAYS: Question[] = AFTER_CHANGES.map((query) => ({ range: "month", query }));
/** After the rebuild, every query in both ranges, each on one storage or the other. */
const REBUILT_PLAN = allPairs({
  storage: SYSTEM_STORAGES,
  range: ["month", "short"],
  query: indices(QUERIES.length),
});

describe.each(SYSTEM_STORAGES)("the engine on %s", (storage) => {
  const engine = engineDatabase(storage);

  it("stays equal after late rows, a deletion, retention and the rebuild", async () => {
    const { db } = engine;
    const zone = "Asia/Kathmandu";
    const afterChange = (change: number) =>
      CHANGE_PLAN.filter((row) => row.storage === storage && row.change === change);
    await setZone(db, SITE, zone);
    await build(db);
    // Two days' late visits, each written last row first: those days' rollups go stale and
    // are worked out from the rows beside the others; the month's too.
    await writeLastRowFirst(db, {
      ...lateTraffic(SITE),
      fromMs: Date.parse("2026-10-14T00:00:00Z"),
      toMs: Date.parse("2026-10-16T00:00:00Z"),
      pageViews: 40,
    });
    const used = await compareAll(db, zone, LATE_DAYS);
    expect(used["rollups and rows"]).toBeGreaterThan(5);
    // More late days than the engine works out from the rows: ingest.visits answers.
    await writeLastRowFirst(db, lateTraffic(SITE));
    expect((await compareAll(db, zone, afterChange(1))).rollups).toBeUndefined();
    await build(db);
    await compareAll(db, zone, afterChange(2));

    await deleteVisitor(db, {
      siteId: SITE,
      visitorId: await busiestVisitor(db, SITE),
      withLeads: true,
    });
    await compareAll(db, zone, afterChange(3));
    await build(db);
    await compareAll(db, zone, afterChange(4));

    // 40 days before 2026-11-20T10:07Z: a cutoff of 2026-10-11T10:07Z, inside a day.
    await runRetention(db, {
      partitions: new Partitions(db),
      retentionDays: 40,
      now: Date.parse("2026-11-20T10:07:00Z"),
    });
    await compareAll(db, zone, afterChange(5));
    await build(db);

    const rebuilt = await db.transaction((tx) => rebuildSite(tx, SITE));
    expect(rebuilt[0]).toMatchObject({ added: 0, removed: 0, changed: 0 });
    await compareAll(db, zone, REBUILT_PLAN.filter((row) => row.storage === storage));
  }, 600_000);

  it("compares periods, lists time labels and counts funnels as the stored rows do", async () => {
    const { db } = engine;
    await setZone(db, SITE, "America/New_York");
    await build(db);
    const store = new IngestStore(db);
    const answerer = (engine: ReturnType<typeof statsEngine>) =>
      new StatsAnswerer({ engine, site: (id) => store.statsSite(id), now: () => NOW });
    const fast = answerer(statsEngine(db));
    const rows = answerer(referenceEngine(db));
    const queries: Record<string, Json>[] = ([
      { ...TRAFFIC_QUERY, date_range: ["2026-10-20", "2026-11-02"] },
      { metrics: ["visitors", "pageviews", "revenue"], dimensions: ["time:week"] },
      { metrics: ["visits", "bounce_rate"], dimensions: ["visit:exit_page", "time:day"] },
      { metrics: ["events", "visitors"], dimensions: ["event:props:plan", "time:day"] },
    ] as Record<string, Json>[]).map((q) => ({ date_range: MONTH, ...q }));
    let compared = 0;
    for (const query of queries) {
      for (const compare of ["previous_period", ["2026-09-28", "2026-10-06"]] as Json[]) {
        const body = {
          ...query,
          include: { compare, totals: true, time_labels: true },
          limit: 10_000,
        };
        const a = await fast.query(SITE, queryBodyOf(body));
        const b = await rows.query(SITE, queryBodyOf(body));
        expect(a.answer, JSON.stringify(body)).toEqual(b.answer);
        expect(a.compared, JSON.stringify(body)).toEqual(b.compared);
        expect(a.timeLabels).toEqual(b.timeLabels);
        compared += a.compared!.rows.filter((c) => c !== null && c.metrics[0] !== 0).length;
      }
    }
    // The comparisons compared something: rows with data on both sides.
    expect(compared).toBeGreaterThan(20);
    const funnels: Record<string, Json>[] = [
      { steps: [{ page: "/" }, { page: "/pricing" }, { event: "signup" }, { event: "purchase" }] },
      { steps: [{ page: "/blog*" }, { lead: true }], include: { bots: true } },
      {
        steps: [{ page: "/*" }, { event: "purchase" }],
        filters: [["is_not", "visit:channel", ["direct"]], ["contains", "visit:exit_page", ["/"]]],
      },
    ];
    for (const funnel of funnels) {
      const body = funnelBodyOf({ date_range: MONTH, ...funnel });
      const a = await fast.funnel(SITE, body);
      const b = await rows.funnel(SITE, body);
      expect(a.steps, JSON.stringify(funnel)).toEqual(b.steps);
      expect(Number(a.steps[1].visitors)).toBeGreaterThan(0);
    }
  }, 300_000);

  it("keeps a visit's attributes from its first page view and its exit from its last", async () => {
    const { db } = engine;
    // A visit written last row first: each earlier page view takes the attributes over.
    const views = [...generateVisits({ ...lateTraffic(SITE), idPrefix: "order", pageViews: 30 })]
      .flat().flatMap((item) => item.kind === "view" ? [item] : [])
      .filter((item) => item.row.session_id !== null);
    const longest = views.reduce((best, v) => {
      const n = views.filter((w) => w.row.session_id === v.row.session_id).length;
      return n > best.n ? { session: v.row.session_id!, n } : best;
    }, { session: "", n: 0 });
    const own = views.filter((v) => v.row.session_id === longest.session)
      .sort((a, b) => Date.parse(b.row.received_at) - Date.parse(a.row.received_at));
    expect(own.length).toBeGreaterThan(2);
    const session = longest.session;
    for (const item of own) {
      await db.transaction((tx) => writeGroup(tx, [item], { endsTransaction: true }));
    }
    const [visit] = await db.query<{ entry_page: string; exit_page: string; pageviews: number }>(
      "select entry_page, exit_page, pageviews from ingest.visits where site_id = $1 and visit_key = $2",
      [SITE, `s${session}`],
    );
    const path = (url: string) => new URL(url).pathname;
    expect(visit).toEqual({
      entry_page: path(own.at(-1)!.row.url),
      exit_page: path(own[0].row.url),
      pageviews: own.length,
    });
  });
});
