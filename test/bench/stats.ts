/**
 * `deno task bench stats`: the reports on a big site. Loads a site with
 * BENCH_STATS_PAGE_VIEWS page views (10 million unless set) and about a
 * tenth as many events over 13 months through ingest-service's write path
 * (the group-commit writer, batches of 500 items as the gateway sends them,
 * several in flight; not HTTP per row), then times in the same run, p50 and
 * p95 over BENCH_STATS_RUNS runs each, the contract queries below as the
 * service answers them (derived tables where they answer) and from the
 * stored rows alone (the reference engine). The queries the visit sums per
 * local period answer are timed once before those are built (every period
 * from the slices); the build, as ingest-service's background job does it,
 * is timed too. Postgres when DATABASE_URL is
 * set, else PGlite in memory (small scales only). BENCH_STATS_QUERIES picks
 * queries by number, BENCH_STATS_RAW_RUNS=0 skips the rows-only runs, and
 * BENCH_STATS_DATABASE (a
 * Postgres URL) times the queries on a database a previous run loaded (kept
 * with BENCH_STATS_KEEP=1, or when that run was stopped after its load)
 * instead of loading a new one (BENCH_STATS_BUILT=1 keeps the sums its
 * last run built).
 */
import type { BenchReport } from "./main.ts";
import { DATABASE_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { openPglite } from "../../services/lib/db/pglite.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../../services/ingest/migrations.ts";
import { Partitions } from "../../services/ingest/partitions.ts";
import { groupCommitFor } from "../../services/ingest/main.ts";
import { generateVisits, inGroups } from "../../services/ingest/stats/generated.ts";
import { derivedEngine, derivedPath } from "../../services/ingest/stats/derived_engine.ts";
import { loadConfig } from "../../services/lib/config.ts";
import { referenceEngine, referencePartials } from "../../services/ingest/stats/reference.ts";
import { finish } from "../../services/ingest/stats/finish.ts";
import { parseQuery } from "../../services/ingest/stats/query.ts";
import { planQuery } from "../../services/ingest/stats/service.ts";
import { daysOf } from "../../services/ingest/stats/ranges.ts";
import type { Json } from "../../services/lib/stats/wire.ts";
import { percentile } from "./measure.ts";
import { buildPeriodSums } from "../../services/ingest/stats/periods.ts";
import { buildVisitorDays } from "../../services/ingest/stats/returns.ts";
import { buildPageDays } from "../../services/ingest/stats/pages.ts";
import type { Plan } from "../../services/ingest/stats/plan.ts";
import type { StatsQuery } from "../../services/ingest/stats/query.ts";

const PAGE_VIEWS = Number(Deno.env.get("BENCH_STATS_PAGE_VIEWS") ?? 10_000_000);
const RUNS = Number(Deno.env.get("BENCH_STATS_RUNS") ?? 7);
const RAW_RUNS = Number(Deno.env.get("BENCH_STATS_RAW_RUNS") ?? 3);
const LOADED = Deno.env.get("BENCH_STATS_DATABASE") || undefined;
/** Keep the database this run loads (its URL is in the notes), to time it again later. */
const KEEP = Deno.env.get("BENCH_STATS_KEEP") === "1";
/**
 * With BENCH_STATS_DATABASE: keep the sums that database's last run built
 * (their builders then build only what is missing or stale) instead of
 * deleting them and timing the queries before and the build.
 */
const BUILT = Deno.env.get("BENCH_STATS_BUILT") === "1" && LOADED !== undefined;
/** Which of QUERIES to time (their numbers from 0, comma-separated), all when unset. */
const ONLY = Deno.env.get("BENCH_STATS_QUERIES")?.split(",").map(Number);
const SITE = "bench";
const ZONE = "Europe/Berlin";
const DAY_MS = 86_400_000;
/** The data: 13 months (395 days) up to the end of 2026-10-31 UTC. */
const TO = Date.parse("2026-11-01T00:00:00Z");
const FROM = TO - 395 * DAY_MS;
const BATCH_ITEMS = 500;
const IN_FLIGHT = 8;

/** The metrics of the Traffic report and of the dashboard's summary and breakdowns. */
const TRAFFIC_METRICS: Json[] = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
];

/** The queries of the dashboard's Ad channels and Events reports (one event's) over a range. */
function dashboardQueries(
  label: string,
  range: Json,
): { name: string; body: Record<string, Json> }[] {
  return [
    {
      name: `${label}, Ad channels by visit:ad_link (the dashboard's)`,
      body: {
        metrics: ["visits", "events", "leads", "revenue"],
        dimensions: ["visit:ad_link"],
        date_range: range,
        limit: 100,
      },
    },
    {
      name: `${label}, conversion rate of one event (the dashboard's Events)`,
      body: {
        metrics: ["conversion_rate"],
        filters: [["is", "event:name", ["purchase"]]],
        date_range: range,
      },
    },
  ];
}

/** The dashboard's Traffic breakdown by one visit: attribute over 12 months. */
const yearBreakdown = (attribute: string) => ({
  name: `12 months by visit:${attribute} (the dashboard's breakdown)`,
  body: {
    metrics: TRAFFIC_METRICS,
    dimensions: [`visit:${attribute}`],
    date_range: ["2025-11-01", "2026-10-31"],
    limit: 100,
  },
});

/** Page views and events per page whose path contains "blog" (the page counts) over a range. */
const blogPages = (label: string, range: Json) => ({
  name: `event:page contains "blog", ${label}`,
  body: {
    metrics: ["pageviews", "events"],
    dimensions: ["event:page"],
    filters: [["contains", "event:page", ["blog"]]],
    date_range: range,
  },
});

const QUERIES: { name: string; body: Record<string, Json> }[] = [
  {
    name: "Traffic, 30 days, time:day × visit:channel",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:channel"],
      date_range: ["2026-10-02", "2026-10-31"],
    },
  },
  {
    name: "Traffic with totals (the contract's example)",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:channel"],
      date_range: ["2026-10-02", "2026-10-31"],
      include: { totals: true },
    },
  },
  {
    name: "12 months, time:month (page views, events, revenue)",
    body: {
      metrics: ["pageviews", "events", "revenue"],
      dimensions: ["time:month"],
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  {
    name: "12 months, time:month (visitors, visits, page views)",
    body: {
      metrics: ["visitors", "visits", "pageviews"],
      dimensions: ["time:month"],
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  {
    name: "12 months, summary without dimensions (the dashboard's)",
    body: {
      metrics: TRAFFIC_METRICS,
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  yearBreakdown("channel"),
  yearBreakdown("source"),
  {
    name: "30 days, summary without dimensions",
    body: {
      metrics: TRAFFIC_METRICS,
      date_range: ["2026-10-02", "2026-10-31"],
    },
  },
  ...dashboardQueries("12 months", ["2025-11-01", "2026-10-31"]),
  ...dashboardQueries("30 days", ["2026-10-02", "2026-10-31"]),
  blogPages("30 days", ["2026-10-02", "2026-10-31"]),
  // The Ad channels report's summary and chart: visits with any ad link.
  {
    name: "12 months, Ad channels summary (visits with an ad link, the dashboard's)",
    body: {
      metrics: ["visits", "events", "leads", "revenue"],
      filters: [["contains", "visit:ad_link", [""]]],
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  {
    name: "12 months, Ad channels by time:month (visits with an ad link, the dashboard's)",
    body: {
      metrics: ["visits"],
      dimensions: ["time:month"],
      filters: [["contains", "visit:ad_link", [""]]],
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  yearBreakdown("entry_page"),
  yearBreakdown("country"),
  // Year-long queries beyond the dashboard's, for "at most 1 s for any contract query": by day
  // and value (the period sums), filtered by another attribute (no kept table: the slices), and
  // pages (the page counts).
  {
    name: "12 months, time:day × visit:source (period sums)",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:source"],
      date_range: ["2025-11-01", "2026-10-31"],
      limit: 10_000,
    },
  },
  {
    name: "12 months by visit:source, filtered by visit:country (slices)",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["visit:source"],
      filters: [["is", "visit:country", ["DE"]]],
      date_range: ["2025-11-01", "2026-10-31"],
    },
  },
  blogPages("12 months", ["2025-11-01", "2026-10-31"]),
];

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function load(db: Database): Promise<{ items: number; seconds: number }> {
  const months: number[] = [];
  for (let at = FROM; at < TO + 31 * DAY_MS; at += 27 * DAY_MS) months.push(at);
  await new Partitions(db).ensure(months);
  // No 3 s deadline: on a busy machine a transaction of 5,000 items may take longer (one did, at
  // load average 12), and a load that stops there measures nothing.
  const committer = groupCommitFor(db, true, 600_000);
  const started = performance.now();
  let items = 0;
  const inFlight = new Set<Promise<unknown>>();
  const visits = generateVisits({
    siteId: SITE,
    fromMs: FROM,
    toMs: TO,
    pageViews: PAGE_VIEWS,
    eventsPerView: 0.1,
    seed: 12,
  });
  let lastReport = performance.now();
  for (const group of inGroups(visits, BATCH_ITEMS)) {
    items += group.length;
    const done: Promise<unknown> = committer.submit(group).then(() => inFlight.delete(done));
    inFlight.add(done);
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now();
      const seconds = (lastReport - started) / 1000;
      console.error(`stats bench: ${items} items written in ${round(seconds)} s`);
    }
  }
  await Promise.all(inFlight);
  await committer.drained();
  return { items, seconds: (performance.now() - started) / 1000 };
}

/** p50 and p95 of `runs` runs (after one to warm up when `warm`), and the last answer. */
async function time<T>(runs: number, fn: () => Promise<T>, warm = true) {
  if (warm) await fn(); // plans, caches
  const ms: number[] = [];
  let answer: T | undefined;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    answer = await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: round(percentile(ms, 0.5)), p95: round(percentile(ms, 0.95)), answer };
}

export async function run(): Promise<BenchReport> {
  const storage = DATABASE_URL ? "postgres" : "pglite";
  const report: BenchReport = {
    name: "stats",
    description: `Reports queries on one site with ${PAGE_VIEWS} page views and ~${
      Math.round(PAGE_VIEWS / 10)
    } events over 13 months (zone ${ZONE}) on ${storage}, loaded through the group-commit writer; p50/p95 of ${RUNS} runs as the service answers (derived tables where they answer) and of ${RAW_RUNS} from the stored rows alone.`,
    rows: [],
    notes: [],
  };
  const fresh = DATABASE_URL && !LOADED ? await freshPostgresUrl() : undefined;
  const url = LOADED ?? fresh?.url;
  if (fresh && KEEP) {
    console.error(`stats bench: loading into ${fresh.url} (kept)`);
    report.notes!.push(`database kept: BENCH_STATS_DATABASE=${fresh.url}`);
  }
  const db = url ? await openPostgres(url, { poolSize: 4 }) : await openPglite("memory://");
  try {
    // A database an earlier run loaded gets the migrations added since.
    await migrate(db, INGEST_SCHEMA, ingestMigrations);
    if (!LOADED) {
      const loaded = await load(db);
      report.notes!.push(
        `load: ${loaded.items} items in ${round(loaded.seconds)} s (${
          Math.round(loaded.items / loaded.seconds)
        } items/s, derived tables kept)`,
      );
      await db.exec("analyze");
    }
    const [sizes] = await db.query<Record<string, number>>(
      `select (select count(*) from ingest.page_views)::int as page_views,
              (select count(*) from ingest.events)::int as events,
              (select count(*) from ingest.stat_counters)::int as counters,
              (select count(*) from ingest.visit_slices)::int as slices,
              (select count(*) from ingest.visits)::int as visits`,
    );
    report.notes!.push(`stored: ${JSON.stringify(sizes)}`);
    // As the service runs it: STATS_WORK_MEM_MB from the environment, read as the services read it.
    const { statsWorkMemMb } = loadConfig(Deno.env.toObject(), "service");
    const engine = derivedEngine(db, { workMemMb: statsWorkMemMb || undefined });
    report.notes!.push(`STATS_WORK_MEM_MB: ${statsWorkMemMb}`);
    const plans = new Map<number, { query: StatsQuery; plan: Plan }>();
    for (const [index, { body }] of QUERIES.entries()) {
      if (ONLY && !ONLY.includes(index)) continue;
      const query = parseQuery({ limit: 10_000, ...body });
      const days = daysOf(query.dateRange, ZONE);
      plans.set(index, {
        query,
        plan: await planQuery(referenceEngine(db), SITE, query, ZONE, days),
      });
    }
    // The visit sums per local period, as ingest-service's background job builds them once the
    // periods have ended: first the queries that read them without any (each period from the
    // slices), then the build, timed.
    if (!BUILT) {
      await db.exec(
        `delete from ingest.visit_attribute_sums; delete from ingest.visit_attribute_revenue;
         delete from ingest.visit_attribute_periods; delete from ingest.visitor_attribute_returns;
         delete from ingest.visitor_attribute_builds; delete from ingest.page_day_counts;
         delete from ingest.page_day_builds`,
      );
    }
    for (const [index, { query, plan }] of plans) {
      if (BUILT || !["periods", "pages"].includes(derivedPath(plan) ?? "")) continue;
      const before = await time(1, async () => finish(query, await engine.partials(plan)), false);
      report.notes!.push(
        `${
          QUERIES[index].name
        } before the period sums and page counts were built: ${before.p50} ms`,
      );
    }
    const buildStarted = performance.now();
    const build = await buildPeriodSums(db, SITE, ZONE, TO + DAY_MS);
    report.notes!.push(
      `period sums (${ZONE}): ${build.built} days, weeks and months built in ${
        round((performance.now() - buildStarted) / 1000)
      } s`,
    );
    const daysStarted = performance.now();
    const days = await buildVisitorDays(db, SITE, TO + DAY_MS);
    const [kept] = await db.query<{ sums: number; returns: number }>(
      `select (select count(*) from ingest.visit_attribute_sums)::int as sums,
              (select count(*) from ingest.visitor_attribute_returns)::int as returns`,
    );
    report.notes!.push(
      `visitors by previous day: ${days.built} UTC days built in ${
        round((performance.now() - daysStarted) / 1000)
      } s (${kept.returns} rows; ${kept.sums} rows of period sums)`,
    );
    const pagesStarted = performance.now();
    const pages = await buildPageDays(db, SITE, TO + DAY_MS);
    const [pageCounts] = await db.query<{ n: number }>(
      "select count(*)::int as n from ingest.page_day_counts",
    );
    report.notes!.push(
      `page counts: ${pages.built} UTC days built in ${
        round((performance.now() - pagesStarted) / 1000)
      } s (${pageCounts.n} rows)`,
    );
    for (const [index, { query, plan }] of plans) {
      const { name } = QUERIES[index];
      const path = derivedPath(plan) ?? "rows with visits";
      const service = await time(RUNS, async () => finish(query, await engine.partials(plan)));
      // Not warmed: a run from the rows alone takes long enough to warm itself.
      const raw = RAW_RUNS > 0
        ? await time(RAW_RUNS, async () => finish(query, await referencePartials(db, plan)), false)
        : undefined;
      report.rows.push({
        query: name,
        "read from": path,
        "p50 ms": service.p50,
        "p95 ms": service.p95,
        "rows only p50 ms": raw?.p50 ?? null,
        "rows only p95 ms": raw?.p95 ?? null,
        "same answer": raw
          ? JSON.stringify(raw.answer) === JSON.stringify(service.answer) ? "yes" : "NO"
          : "not compared",
      });
    }
    report.notes!.push(
      `machine: ${navigator.hardwareConcurrency} cores, shared with other work; figures are noisy`,
    );
  } finally {
    await db.close();
    if (!KEEP) await fresh?.drop();
  }
  return report;
}
