/**
 * `deno task bench stats`: the reports on a big site. Loads a site with
 * BENCH_STATS_PAGE_VIEWS page views (10 million unless set) and about a
 * tenth as many events over 13 months through ingest-service's write path
 * (the group-commit writer, batches of 500 items as the gateway sends them,
 * several in flight; not HTTP per row), builds the rollups as
 * ingest-service's background job does (timed), then times the contract
 * queries and a funnel as the service answers them (StatsAnswerer: reading
 * the body, planning, the engine, comparisons), p50 and p95 over
 * BENCH_STATS_RUNS runs each, and from the stored rows alone (the reference
 * engine) BENCH_STATS_RAW_RUNS times (0: not compared). Postgres when
 * DATABASE_URL is set, else PGlite in memory (small scales only).
 * BENCH_STATS_QUERIES picks queries by number; BENCH_STATS_DATABASE (a
 * Postgres URL) times the queries on a database a previous run loaded (kept
 * with BENCH_STATS_KEEP=1) instead of loading a new one, and
 * BENCH_STATS_BUILT=1 keeps the rollups that run built. BENCH_STATS_REPLICA=1
 * loads into a private primary with a streaming standby of its own (Debian's
 * Postgres binaries, test/helpers/replica.ts) instead of DATABASE_URL, and
 * times each query a second time on the standby, as ingest-service runs it
 * with DATABASE_READ_URL (one read-only snapshot on the report pool).
 */
import type { BenchReport } from "./main.ts";
import { ReportReads } from "../../services/lib/db/report_reads.ts";
import { postgresBin, type ReplicaPair, startReplicaPair } from "../helpers/replica.ts";
import { DATABASE_URL } from "../helpers/env.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { openPglite } from "../../services/lib/db/pglite.ts";
import type { Database } from "../../services/lib/db/mod.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../../services/ingest/migrations/mod.ts";
import { Partitions } from "../../services/ingest/partitions.ts";
import { groupCommitFor } from "../../services/ingest/main.ts";
import { generateVisits, inGroups, TRAFFIC_EVENT_TYPES } from "../helpers/generated_traffic.ts";
import { pathOf, statsEngine } from "../../services/ingest/stats/engine.ts";
import { loadConfig } from "../../services/lib/config.ts";
import { referenceEngine } from "../../services/ingest/stats/reference.ts";
import { planQuery, StatsAnswerer } from "../../services/ingest/stats/service.ts";
import { parseQuery } from "../../services/ingest/stats/query.ts";
import { resolveRange } from "../../services/ingest/stats/ranges.ts";
import { IngestStore } from "../../services/ingest/storage.ts";
import { buildRollups, rollupSite } from "../../services/ingest/stats/rollups.ts";
import { funnelBodyOf, queryBodyOf } from "../../services/lib/stats/wire.ts";
import type { Json } from "../../services/lib/stats/wire.ts";
import { percentile } from "./measure.ts";
import { exportPage } from "../../services/ingest/exports.ts";
import { eventJson, pageViewJson } from "../../services/lib/export_rows.ts";
import {
  type HistoryRecord,
  parseHistoryLine,
  storeHistory,
} from "../../services/ingest/history.ts";

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
/** Load into a private primary and time the queries on its streaming standby too. */
const REPLICA = Deno.env.get("BENCH_STATS_REPLICA") === "1";
export const SITE = "bench";
/** Records of the site's exports the benchmark imports into another site (history import). */
const IMPORT_RECORDS = Number(Deno.env.get("BENCH_STATS_IMPORT") ?? 200_000);
export const ZONE = "Europe/Berlin";
const DAY_MS = 86_400_000;
/** The data: 13 months (395 days) up to the end of 2026-10-31 UTC. */
const TO = Date.parse("2026-11-01T00:00:00Z");
const FROM = TO - 395 * DAY_MS;
/** The service's "now": the end of the data, so the realtime range holds its last minutes. */
const NOW = TO;
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
    date_range: ["2025-11-01", "2026-10-31"] as Json,
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

const YEAR: Json = ["2025-11-01", "2026-10-31"];
const MONTH: Json = ["2026-10-02", "2026-10-31"];

/** A query of the benchmark: its body, or a funnel's. */
interface BenchQuery {
  name: string;
  body: Record<string, Json>;
  funnel?: boolean;
}

const QUERIES: BenchQuery[] = [
  {
    name: "Traffic, 30 days, time:day × visit:channel",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:channel"],
      date_range: MONTH,
    },
  },
  {
    name: "Traffic with totals (the contract's example)",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:channel"],
      date_range: MONTH,
      include: { totals: true },
    },
  },
  {
    name: "Traffic, 30 days, compared with the previous period",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:channel"],
      date_range: MONTH,
      include: { compare: "previous_period", time_labels: true, totals: true },
    },
  },
  {
    name: "12 months, time:month (page views, events, revenue)",
    body: {
      metrics: ["pageviews", "events", "revenue"],
      dimensions: ["time:month"],
      date_range: YEAR,
    },
  },
  {
    name: "12 months, time:month (visitors, visits, page views)",
    body: {
      metrics: ["visitors", "visits", "pageviews"],
      dimensions: ["time:month"],
      date_range: YEAR,
    },
  },
  {
    name: "12 months, summary without dimensions (the dashboard's)",
    body: { metrics: TRAFFIC_METRICS, date_range: YEAR },
  },
  yearBreakdown("channel"),
  yearBreakdown("source"),
  yearBreakdown("entry_page"),
  yearBreakdown("exit_page"),
  yearBreakdown("country"),
  {
    name: "30 days, summary without dimensions",
    body: { metrics: TRAFFIC_METRICS, date_range: MONTH },
  },
  ...dashboardQueries("12 months", YEAR),
  ...dashboardQueries("30 days", MONTH),
  blogPages("30 days", MONTH),
  blogPages("12 months", YEAR),
  {
    name: "12 months, Ad channels summary (visits with an ad link, the dashboard's)",
    body: {
      metrics: ["visits", "events", "leads", "revenue"],
      filters: [["contains", "visit:ad_link", [""]]],
      date_range: YEAR,
    },
  },
  {
    name: "12 months, Ad channels by time:month (visits with an ad link, the dashboard's)",
    body: {
      metrics: ["visits"],
      dimensions: ["time:month"],
      filters: [["contains", "visit:ad_link", [""]]],
      date_range: YEAR,
    },
  },
  {
    name: "12 months, time:day × visit:source",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["time:day", "visit:source"],
      date_range: YEAR,
      limit: 10_000,
    },
  },
  {
    name: "12 months by visit:source, filtered by visit:country",
    body: {
      metrics: TRAFFIC_METRICS,
      dimensions: ["visit:source"],
      filters: [["is", "visit:country", ["DE"]]],
      date_range: YEAR,
    },
  },
  {
    name: "12 months, one event by event:props:plan",
    body: {
      metrics: ["events", "visitors", "revenue"],
      dimensions: ["event:props:plan"],
      filters: [["is", "event:name", ["purchase"]]],
      date_range: YEAR,
    },
  },
  {
    name: "30 days, a 4-step funnel",
    funnel: true,
    body: {
      date_range: MONTH,
      steps: [{ page: "/" }, { page: "/pricing" }, { event: "signup" }, { event: "purchase" }],
    },
  },
  {
    name: "the last 30 minutes by time:minute",
    body: { metrics: ["visitors", "pageviews"], dimensions: ["time:minute"], date_range: "30m" },
  },
];

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Loads the generated site (SITE, 13 months up to TO) into db through the
 * group-commit writer: `pageViews` page views and about a tenth as many events.
 */
export async function load(
  db: Database,
  pageViews = PAGE_VIEWS,
): Promise<{ items: number; seconds: number }> {
  const months: number[] = [];
  for (let at = FROM; at < TO + 31 * DAY_MS; at += 27 * DAY_MS) months.push(at);
  await new Partitions(db).ensure(months);
  await db.query(
    "insert into ingest.sites (site_id, time_zone) values ($1, $2) on conflict do nothing",
    [SITE, ZONE],
  );
  for (const [position, type] of TRAFFIC_EVENT_TYPES.entries()) {
    await db.query(
      `insert into ingest.event_types (site_id, name, title, description, status, params,
              brings_revenue, currency, position)
       values ($1, $2, $2, '', 'active', $3::json, $4, null, $5) on conflict do nothing`,
      [SITE, type.name, JSON.stringify(type.params), type.name === "purchase", position],
    );
  }
  // No 3 s deadline: on a busy machine a transaction of 5,000 items may take longer, and a load
  // that stops there measures nothing.
  const committer = groupCommitFor(db, true, 600_000);
  const started = performance.now();
  let items = 0;
  const inFlight = new Set<Promise<unknown>>();
  const visits = generateVisits({
    siteId: SITE,
    fromMs: FROM,
    toMs: TO,
    pageViews,
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
  const storage = REPLICA
    ? "a private Postgres primary with a standby"
    : DATABASE_URL
    ? "postgres"
    : "pglite";
  const report: BenchReport = {
    name: "stats",
    description: `Reports queries on one site with ${PAGE_VIEWS} page views and ~${
      Math.round(PAGE_VIEWS / 10)
    } events over 13 months (zone ${ZONE}) on ${storage}, loaded through the group-commit writer; p50/p95 of ${RUNS} runs as the service answers (rollups where they answer) and of ${RAW_RUNS} from the stored rows alone.`,
    rows: [],
    notes: [],
  };
  let pair: ReplicaPair | undefined;
  if (REPLICA) {
    const bin = postgresBin();
    if (!bin) throw new Error("BENCH_STATS_REPLICA=1 needs Debian's postgresql package");
    pair = await startReplicaPair(bin);
  }
  const fresh = DATABASE_URL && !LOADED && !pair ? await freshPostgresUrl() : undefined;
  const url = pair?.primaryUrl ?? LOADED ?? fresh?.url;
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
        } items/s, visits kept)`,
      );
      await db.exec("analyze");
    }
    const [sizes] = await db.query<Record<string, number>>(
      `select (select count(*) from ingest.page_views)::int as page_views,
              (select count(*) from ingest.events)::int as events,
              (select count(*) from ingest.visits)::int as visits`,
    );
    report.notes!.push(`stored: ${JSON.stringify(sizes)}`);
    if (IMPORT_RECORDS > 0) report.notes!.push(await importRate(db));
    if (!BUILT) await db.exec("delete from ingest.rollup_periods");
    const buildStarted = performance.now();
    console.error("stats bench: building the rollups");
    const site = (await rollupSite(db, SITE))!;
    const built = await buildRollups(db, site, NOW);
    const [kept] = await db.query<{ periods: number; rollups: number; bytes: number }>(
      `select (select count(*) from ingest.rollup_periods)::int as periods,
              (select count(*) from ingest.rollups)::int as rollups,
              (select pg_total_relation_size('ingest.rollups'))::float8 as bytes`,
    );
    report.notes!.push(
      `rollups: ${built.built} days and months built in ${
        round((performance.now() - buildStarted) / 1000)
      } s (${kept.periods} periods, ${kept.rollups} rows, ${
        round(kept.bytes / 2 ** 20)
      } MB with their visitor sets)`,
    );
    // As the service runs it: STATS_WORK_MEM_MB from the environment, read as the services read it.
    const { statsWorkMemMb } = loadConfig(Deno.env.toObject(), "service");
    report.notes!.push(`STATS_WORK_MEM_MB: ${statsWorkMemMb}`);
    const store = new IngestStore(db);
    const answerer = (engine: ReturnType<typeof statsEngine>) =>
      new StatsAnswerer({ engine, site: (id) => store.statsSite(id), now: () => NOW });
    const service = answerer(statsEngine(db, { workMemMb: statsWorkMemMb || undefined }));
    const rowsOnly = answerer(referenceEngine(db));
    // On the standby: each query one snapshot on a report connection, as with DATABASE_READ_URL.
    await pair?.caughtUp();
    const standbyDb = pair ? await openPostgres(pair.standbyUrl, { poolSize: 4 }) : undefined;
    const onStandby = standbyDb && new ReportReads(standbyDb, { timeoutMs: 3_600_000 });
    const standbyAsk = (q: BenchQuery) =>
      onStandby!.run((reads) => {
        const readStore = new IngestStore(reads);
        const target = new StatsAnswerer({
          engine: statsEngine(reads, { workMemMb: statsWorkMemMb || undefined }),
          site: (id) => readStore.statsSite(id),
          now: () => NOW,
        });
        return ask(target, q);
      });
    const ask = (target: StatsAnswerer, q: BenchQuery) =>
      q.funnel
        ? target.funnel(SITE, funnelBodyOf(q.body)).then((a) =>
          JSON.stringify(a.steps, jsonBigints)
        )
        : target.query(SITE, queryBodyOf(q.body)).then((a) =>
          JSON.stringify([a.answer.rows, a.answer.totals, a.compared?.rows], jsonBigints)
        );
    for (const [index, q] of QUERIES.entries()) {
      if (ONLY && !ONLY.includes(index)) continue;
      const path = q.funnel ? "rows and visits" : await pathFor(db, q.body);
      const timed = await time(RUNS, () => ask(service, q));
      // Not warmed: a run from the rows alone takes long enough to warm itself.
      const raw = RAW_RUNS > 0 ? await time(RAW_RUNS, () => ask(rowsOnly, q), false) : undefined;
      const standby = onStandby ? await time(RUNS, () => standbyAsk(q)) : undefined;
      console.error(`stats bench: ${index}. ${q.name}: p50 ${timed.p50} ms, p95 ${timed.p95} ms`);
      report.rows.push({
        query: `${index}. ${q.name}`,
        "read from": path,
        "p50 ms": timed.p50,
        "p95 ms": timed.p95,
        "rows only p50 ms": raw?.p50 ?? null,
        "same answer": raw ? (raw.answer === timed.answer ? "yes" : "NO") : "not compared",
        ...(standby
          ? {
            "standby p50 ms": standby.p50,
            "standby p95 ms": standby.p95,
            "same on standby": standby.answer === timed.answer ? "yes" : "NO",
          }
          : {}),
      });
    }
    report.notes!.push(
      `machine: ${navigator.hardwareConcurrency} cores, shared with other work; figures are noisy`,
    );
    if (pair) {
      report.notes!.push(
        "standby: a streaming replica on the same machine and disk (pg_basebackup -R), hot standby",
      );
    }
    await standbyDb?.close();
  } finally {
    await db.close();
    if (!KEEP) await fresh?.drop();
    await pair?.stop();
  }
  return report;
}

/**
 * History import's rate: the first IMPORT_RECORDS page views and events of
 * the site's exports (as `pageviews export` and `events export` print them,
 * with their kind) checked and stored into another site, 5,000 a
 * transaction, as the import command's calls do.
 */
async function importRate(db: Database): Promise<string> {
  const target = `${SITE}-import`;
  await db.query("delete from ingest.sites where site_id = $1", [target]);
  await db.query("insert into ingest.sites (site_id, time_zone) values ($1, $2)", [target, ZONE]);
  for (const [position, type] of TRAFFIC_EVENT_TYPES.entries()) {
    await db.query(
      `insert into ingest.event_types (site_id, name, title, description, status, params,
              brings_revenue, currency, position)
       values ($1, $2, $2, '', 'active', $3::json, $4, 'USD', $5)`,
      [target, type.name, JSON.stringify(type.params), type.name === "purchase", position],
    );
  }
  const lines: string[] = [];
  for (const [kind, name] of [["page_views", "pageview"], ["events", "event"]] as const) {
    let cursor = "";
    do {
      const page = await exportPage(db, { kind, siteId: SITE, cursor, pageSize: 10_000 });
      for (const row of page.rows) {
        // deno-lint-ignore no-explicit-any
        const json = kind === "events" ? eventJson(row as any) : pageViewJson(row as any);
        lines.push(JSON.stringify({ kind: name, ...json }));
      }
      cursor = page.nextCursor;
    } while (cursor && lines.length < IMPORT_RECORDS * (kind === "events" ? 1 : 0.9));
  }
  const store = new IngestStore(db);
  const types = new Map((await store.eventTypes(target)).map((t) => [t.name, t]));
  const partitions = new Partitions(db);
  const started = performance.now();
  let stored = 0;
  for (let i = 0; i < lines.length; i += 5_000) {
    const records: HistoryRecord[] = [];
    for (const [j, line] of lines.slice(i, i + 5_000).entries()) {
      records.push(parseHistoryLine(line, i + j + 1, { siteId: target, types, nowMs: NOW }));
    }
    const counts = await storeHistory(db, records, partitions);
    stored += counts.pageviews + counts.events;
  }
  const seconds = (performance.now() - started) / 1000;
  return `history import: ${stored} of ${lines.length} records stored in ${round(seconds)} s (${
    Math.round(lines.length / seconds)
  } records/s, checked and written 5,000 a transaction)`;
}

/** How the engine answers a query body (rollups, visits or rows). */
async function pathFor(db: Database, body: Record<string, Json>): Promise<string> {
  const query = parseQuery(body, { paramKeys: new Set(["plan", "seats", "ok"]) });
  const range = await resolveRange(query.dateRange, ZONE, NOW, () => Promise.resolve(FROM));
  return await pathOf(db, await planQuery(referenceEngine(db), SITE, query, ZONE, range));
}

const jsonBigints = (_: string, value: unknown) =>
  typeof value === "bigint"
    ? String(value)
    // Revenue's currencies in one order: engines may meet them in another.
    : value instanceof Map
    ? [...value].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : value;
