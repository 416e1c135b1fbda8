/**
 * The engine the service uses: a query read from the derived tables
 * (derived.ts) wherever they give the same answer as the stored rows, the
 * reference engine (reference.ts) otherwise. Which query reads which table
 * is in docs/analytics.md ("Which table answers a query").
 *
 * - Counters answer page views, events, leads and revenue by time and
 *   event:name (filters on event:name included) when no visit: dimension or
 *   filter is asked for.
 * - Visit slices answer everything else without event: dimensions or
 *   filters: visitors (distinct visitor keys of the slices in range), visits,
 *   bounce rate, duration and views per visit (a visit's slices in range
 *   summed), grouped and filtered by visit: attributes, which every slice
 *   carries (so only the range's slices are read); revenue then
 *   still comes from the counters when no visit: dimension or filter is asked,
 *   else from the range's valued events, each joined to its own slice for its
 *   visit's attributes.
 * - Visit sums per local period (periods.ts) answer what the slices would by
 *   day, week or month alone or with one visit: dimension, by one visit:
 *   dimension alone, and without any dimension, without filters or bots: the
 *   Traffic report, the dashboard's summary, its breakdowns and its Ad
 *   channels (revenue per value kept beside the sums); the
 *   visitors of their totals and of an attribute's values over the whole
 *   range come from the visitors by previous day (returns.ts).
 * - conversion_rate alone, without dimensions or bots, filtered by
 *   event:name only (the dashboard's Events): its visitors as the summary
 *   without dimensions counts them, the converted from the range's events.
 * - Page counts per UTC day (pages.ts) answer what the counters would, by
 *   event:page or filtered by it: the range's whole UTC days that are
 *   current from the counts, the rest from the stored rows.
 * - visitors by event:page, other conversion_rate queries, and event:name
 *   together with visit: dimensions or filters read the stored rows.
 *
 * The derived tables are exact for any range whose ends are 15-minute UTC
 * marks (every local midnight of every zone in use); a range that is not
 * reads the stored rows too.
 */
import type { Database, Queryable } from "../../lib/db/mod.ts";
import { type PartRow, readParts, rowsAlone } from "./aggregate.ts";
import {
  and,
  bucketOf,
  bucketParams,
  eventColumn,
  eventFilters,
  instant,
  iso,
  KIND,
  levels,
  Params,
  type Partials,
  type Plan,
  VISIT_COLUMN,
  visitFilters,
} from "./plan.ts";
import type { EventDimension, MetricName, VisitDimension } from "./query.ts";
import { type Span, splitByDays } from "./day_runs.ts";
import { isPropsDimension, isTimeDimension, isVisitDimension } from "./query.ts";
import { referenceEngine, referencePartials, rowsPartials } from "./reference.ts";
import { rowsFunnel } from "./funnel.ts";
import type { StatsEngine } from "./service.ts";
import { periodRows, queryPeriods } from "./periods.ts";
import { bucket15, QUARTER_HOUR_MS, storedRows } from "./derived.ts";
import { pageCountRows } from "./pages.ts";

const ROW_METRICS: MetricName[] = ["pageviews", "events", "leads", "revenue"];
const VISIT_METRICS: MetricName[] = [
  "visits",
  "visitors",
  "bounce_rate",
  "visit_duration",
  "views_per_visit",
];

/**
 * What answers a query: the derived tables ("periods", "counters", "pages",
 * "visits", "conversion"), the stored rows without visits ("rows", for a
 * query that reads nothing of visits), or undefined: the stored rows with
 * every visit's attributes (the reference).
 */
export type DerivedPath = "periods" | "counters" | "pages" | "visits" | "rows" | "conversion";

/**
 * conversion_rate alone, without dimensions or bots, filtered by event:name
 * only (the dashboard's Events report, one query per event): its visitors
 * are the range's visitors, which the derived tables count (a summary
 * without dimensions), and those of them who converted are the distinct
 * visitors of the range's matching events, far fewer rows than all of them.
 */
function isPlainConversion(plan: Plan): boolean {
  const { query } = plan;
  return query.metrics.length === 1 && query.metrics[0] === "conversion_rate" &&
    query.dimensions.length === 0 && !query.includeBots && query.filters.length > 0 &&
    query.filters.every((f) => f.dimension === "event:name");
}

/** A plain conversion's visitors: the same range's visitors, without its filters. */
const reachOf = (plan: Plan): Plan => ({
  ...plan,
  query: { ...plan.query, metrics: ["visitors"], filters: [] },
});

/** The dimensions the derived tables keep no column for: only the rows answer them. */
const notKept = (d: string) =>
  d === "time:minute" || d === "visit:exit_page" || d === "visit:referrer" ||
  d === "visit:screen" || isPropsDimension(d);

export function derivedPath(plan: Plan): DerivedPath | undefined {
  if (isPlainConversion(plan) && derivedPath(reachOf(plan))) return "conversion";
  const kept = ![...plan.query.dimensions, ...plan.query.filters.map((f) => f.dimension)]
    .some(notKept);
  const tables = kept ? tablesPath(plan) : undefined;
  if (tables === "visits" && queryPeriods(plan)) return "periods";
  return tables ??
    (rowsAlone(plan.query) &&
        !plan.query.metrics.some((m) => VISIT_METRICS.includes(m) && m !== "visitors")
      ? "rows"
      : undefined);
}

/** Which derived tables answer a query: "counters", "pages", "visits", or undefined. */
function tablesPath(plan: Plan): "counters" | "pages" | "visits" | undefined {
  const { query } = plan;
  if (plan.startMs % QUARTER_HOUR_MS !== 0 || plan.endMs % QUARTER_HOUR_MS !== 0) return undefined;
  if (query.metrics.includes("conversion_rate")) return undefined;
  const eventDims = [...query.dimensions, ...query.filters.map((f) => f.dimension)]
    .filter((d) => d.startsWith("event:"));
  const byVisit = byVisitOf(query);
  if (eventDims.length > 0) {
    if (byVisit || !query.metrics.every((m) => ROW_METRICS.includes(m))) return undefined;
    return eventDims.includes("event:page") ? "pages" : "counters";
  }
  if (byVisit || query.metrics.some((m) => VISIT_METRICS.includes(m))) return "visits";
  return "counters";
}

/** Whether a query has a visit: dimension or filter. */
const byVisitOf = (query: Plan["query"]) =>
  query.dimensions.some(isVisitDimension) ||
  query.filters.some((f) => isVisitDimension(f.dimension));

const dims = (cols: string[]) =>
  [0, 1, 2].map((i) => `${i < cols.length ? `${cols[i]}::text` : "null::text"} as d${i}`)
    .join(", ");
const groupBy = (cols: string[]) => (cols.length ? `group by ${cols.join(", ")}` : "");

/**
 * The statement of a query read from the counters, the page counts or the
 * slices (path as derivedPath chose).
 */
export function derivedSql(
  plan: Plan,
  path: "counters" | "pages" | "visits",
  params: Params,
): string {
  const { query } = plan;
  const site = params.add(plan.siteId);
  const humans = query.includeBots ? "" : " and not bot";
  // A bucket's time: the range's data may start inside a 15-minute bucket, where the first bucket starts.
  const timeCols = new Map<number, { starts: string; ids: string; first: number }>();
  query.dimensions.forEach((d, i) => {
    if (!isTimeDimension(d)) return;
    const buckets = plan.buckets.get(d)!;
    const b = bucketParams(buckets, params);
    timeCols.set(i, { ...b, first: buckets.starts[0] });
  });
  const ctes: string[] = [];
  const parts: string[] = [];
  const tag = (level: string, p: string) => (level === "g" ? p : p.toUpperCase());
  const needsRevenue = query.metrics.includes("revenue");
  const byVisit = byVisitOf(query);

  // Whole UTC days inside one bucket of every time dimension, and the rest (day_runs.ts).
  const split = splitByDays(
    plan.startMs,
    plan.endMs,
    [...plan.buckets.values()].map((b) => b.starts),
  );
  // The range's counters: the whole days from the day counters, the rest by the quarter hour;
  // each span one index range. By page: the page counts of the whole days, the rest from the
  // rows (pages.ts).
  const counterRows = () => {
    if (path === "pages") {
      return pageCountRows(site, split.days, split.quarters, !query.includeBots, params);
    }
    const read = (table: string, time: string, spans: Span[]) => {
      const bounds = (i: 0 | 1) => params.add(`{${spans.map((s) => iso(s[i])).join(",")}}`);
      return `select c.${time} as bucket, c.kind, nullif(c.name, '') as name,
                     nullif(c.currency, '') as currency, c.n, c.valued, c.revenue
                from unnest(${bounds(0)}::timestamptz[], ${bounds(1)}::timestamptz[]) r(lo, hi)
                cross join lateral (
                  select * from ${table}
                   where site_id = ${site} and ${time} >= r.lo and ${time} < r.hi${humans}) c`;
    };
    return [
      ...(split.days.length ? [read("ingest.stat_counter_days", "day", split.days)] : []),
      ...(split.quarters.length ? [read("ingest.stat_counters", "bucket", split.quarters)] : []),
    ].join("\n union all\n");
  };
  // The counters of the range summed per group, kind and currency in one pass (a few rows),
  // which every counters part then reads.
  const countersFrom = () => {
    const cols = query.dimensions.map((_d, i) => {
      const t = timeCols.get(i);
      // event:name or event:page, the only other dimensions counters and page counts answer.
      if (!t) return `${eventColumn(query.dimensions[i] as EventDimension, params)} as g${i}`;
      const first = `(select ${params.add(iso(t.first))}::text::timestamptz)`;
      return `${bucketOf(`greatest(bucket, ${first})`, t)} as g${i}`;
    });
    const keys = [...cols.map((_, i) => i + 1), cols.length + 1, cols.length + 2];
    ctes.push(`cg as (
      select ${[...cols, ""].join(", ")} kind, currency, sum(n) as n,
             sum(revenue) filter (where valued > 0) as revenue, bool_or(valued > 0) as valued
        from (${counterRows()}) c
       where ${and(eventFilters(query, params))}
       group by ${keys.join(", ")})`);
  };
  const gcols = query.dimensions.map((_, i) => `g${i}`);

  if (path !== "visits") {
    countersFrom();
    for (const level of levels(query)) {
      const cols = level === "g" ? gcols : [];
      parts.push(`select '${tag(level, "r")}' as part, ${dims(cols)},
        (sum(n) filter (where kind = ${KIND.pageview}))::text as n1,
        (sum(n) filter (where kind = ${KIND.event}))::text as n2,
        (sum(n) filter (where kind = ${KIND.lead}))::text as n3,
        null::text as n4, null::text as cur
        from cg ${groupBy(cols)}`);
    }
  } else {
    // Every slice carries its visit's attributes, so filters apply to the slices and
    // a visit's attributes are any of its slices' (min): no join to ingest.visits.
    const attrs = [
      ...new Set(
        query.dimensions.filter(isVisitDimension).map((d) => VISIT_COLUMN[d as VisitDimension]),
      ),
    ];
    // Plain parameters: the planner sees them and estimates how many slices the range holds.
    const from = instant(params, plan.startMs);
    const to = instant(params, plan.endMs);
    const slices = `ingest.visit_slices
       where site_id = ${site} and bucket >= ${from} and bucket < ${to}${humans}
         and ${and(visitFilters(query, params))}`;
    // Not materialized: the two groupings (per visit, per visitor) each scan the range's slices.
    // At ten million page views that took a third less time for the 30-day Traffic query than
    // writing its half million slices to a temporary store once and reading them twice.
    ctes.push(`s as not materialized (
      select bucket, visit_key, visitor_key, first_at, last_at, pageviews, events, leads
             ${attrs.map((c) => `, ${c}`).join("")}
        from ${slices}),
      vf as (
        select visit_key, min(first_at) as first_at, sum(pageviews) as pv, sum(events) as ev,
               round(extract(epoch from max(last_at) - min(first_at)) * 1000)::bigint as dur_ms
               ${attrs.map((c) => `, min(${c}) as ${c}`).join("")}
          from s group by visit_key)`);
    const selects = (alias: string) =>
      query.dimensions.map((d, i) => {
        const t = timeCols.get(i);
        return t
          ? `${bucketOf(`${alias}.first_at`, t)} as g${i}`
          : `${alias}.${VISIT_COLUMN[d as VisitDimension]} as g${i}`;
      });
    const rowSelects = selects("s");
    const visitSelects = selects("vf");
    const visitors = query.metrics.includes("visitors");
    // The slices summed per group and visitor first: each group then counts its visitors as
    // rows, and the total counts distinct visitors of far fewer rows than the slices.
    const svKeys = [...(visitors ? ["visitor_key"] : []), ...gcols];
    ctes.push(`sv as (
      select ${svKeys.length ? svKeys.join(", ") + "," : ""} sum(pageviews) as pv,
             sum(events) as ev, sum(leads) as ld
        from (select s.visitor_key, s.pageviews, s.events, s.leads
                     ${rowSelects.length ? ", " + rowSelects.join(", ") : ""} from s) srows
       ${groupBy(svKeys)}),
      svisits as (select vf.pv, vf.ev, vf.dur_ms
             ${visitSelects.length ? ", " + visitSelects.join(", ") : ""} from vf)`);
    for (const level of levels(query)) {
      const cols = level === "g" ? gcols : [];
      const distinct = level === "g"
        ? "count(*)"
        : "(select count(*) from (select visitor_key from sv group by visitor_key) u)";
      parts.push(`select '${tag(level, "r")}' as part, ${dims(cols)},
        (sum(pv))::text as n1, (sum(ev))::text as n2, (sum(ld))::text as n3,
        ${visitors ? `(${distinct})::text` : "null::text"} as n4,
        null::text as cur
        from sv ${groupBy(cols)}`);
      parts.push(`select '${tag(level, "v")}', ${dims(cols)}, (count(*))::text,
        (count(*) filter (where pv = 1 and ev = 0))::text, (sum(dur_ms))::text, (sum(pv))::text,
        null
        from svisits ${groupBy(cols)}`);
    }
    if (needsRevenue && byVisit) {
      // Revenue by visit: attributes: each valued event joined to its own slice (the slices'
      // key), which carries its visit's attributes; the events' range and the slices'
      // filters as above. Only valued events are read: far fewer than the rows of the range.
      const revSelects = query.dimensions.map((d, i) => {
        const t = timeCols.get(i);
        return t
          ? `${bucketOf("e.at", t)} as g${i}`
          : `s.${VISIT_COLUMN[d as VisitDimension]} as g${i}`;
      });
      const valued = storedRows(
        "event",
        `x.site_id = ${site} and x.received_at >= ${from} and x.received_at < ${to}
         and x.value is not null and x.currency is not null`,
      );
      ctes.push(`rev as (
        select ${revSelects.map((c) => `${c}, `).join("")}e.currency, e.value as revenue
          from (${valued}) e
          join (select * from ${slices}) s
            on s.site_id = e.site_id and s.bucket = ${bucket15("e.at")}
           and s.visit_key = e.visit_key and s.visitor_key = e.visitor_key and s.bot = e.bot)`);
    } else if (needsRevenue) countersFrom();
  }
  if (needsRevenue) {
    // From the counters, or by visit: attributes from the valued events (rev, above).
    const source = path === "visits" && byVisit
      ? "rev"
      : `cg where kind = ${KIND.event} and valued`;
    for (const level of levels(query)) {
      const cols = level === "g" ? gcols : [];
      parts.push(`select '${tag(level, "m")}' as part, ${dims(cols)}, (sum(revenue))::text as n1,
        null::text as n2, null::text as n3, null::text as n4, currency as cur
        from ${source} ${groupBy([...cols, "currency"])}`);
    }
  }
  return `with ${ctes.join(",\n")}\n${parts.join("\nunion all\n")}`;
}

/**
 * The partial sums of a plan from the derived tables, or from the rows
 * without visits ("rows"); undefined when only the reference answers it.
 */
export async function derivedPartials(
  db: Queryable,
  plan: Plan,
): Promise<Partials | undefined> {
  const path = derivedPath(plan);
  if (!path) return undefined;
  if (path === "conversion") return conversionPartials(db, plan);
  if (path === "rows") return rowsPartials(db, plan);
  if (path === "periods") {
    const rows = await periodRows(db, plan);
    return rows && readParts(plan, rows);
  }
  const params = new Params();
  const rows = await db.query<PartRow>(derivedSql(plan, path, params), params.list);
  return readParts(plan, rows);
}

/** A plain conversion (isPlainConversion): its visitors from the derived tables, the converted from the events. */
async function conversionPartials(db: Queryable, plan: Plan): Promise<Partials | undefined> {
  const reached = await derivedPartials(db, reachOf(plan));
  if (!reached) return undefined;
  const params = new Params();
  const events = storedRows(
    "event",
    `x.site_id = ${params.add(plan.siteId)} and x.received_at >= ${instant(params, plan.startMs)}
     and x.received_at < ${instant(params, plan.endMs)}`,
  );
  // Grouped, not count(distinct): Postgres sorts for a distinct count, and hashes a grouping
  // (443,016 events of a year at ten million page views: 631 against 387 ms).
  const [row] = await db.query<{ n: string }>(
    `select count(*)::text as n from (
       select visitor_key from (${events}) e
        where not bot and ${and(eventFilters(plan.query, params))}
        group by visitor_key) converted`,
    params.list,
  );
  return {
    groups: reached.groups,
    all: { ...reached.all, reached: reached.all.visitors, converted: Number(row.n) },
  };
}

export interface EngineOptions {
  /**
   * Postgres work_mem for a report's statement (SET LOCAL, its transaction
   * only), in MB: its groupings of slices and visits spill to disk at the
   * default 4 MB. Undefined leaves the server's setting.
   */
  workMemMb?: number;
}

/**
 * The service's engine: the derived tables where they answer, the stored
 * rows otherwise; each query in a transaction of its own with its settings.
 */
export function derivedEngine(db: Database, options: EngineOptions = {}): StatsEngine {
  const reference = referenceEngine(db);
  const settings = [
    // JIT compiling took 1.4 s of a 12-month visitors query at 10 million page views (57
    // functions), 55 ms of a 30-day one: more than it saves on a statement run once.
    "set local jit = off",
    ...(options.workMemMb === undefined
      ? []
      : [`set local work_mem = '${Math.trunc(options.workMemMb)}MB'`]),
  ].join("; ");
  const withSettings = <T>(run: (tx: Queryable) => Promise<T>) =>
    db.transaction(async (tx) => {
      await tx.exec(settings);
      return await run(tx);
    });
  return {
    extent: reference.extent,
    partials: (plan) =>
      withSettings(async (tx) => (await derivedPartials(tx, plan)) ?? referencePartials(tx, plan)),
    funnel: (plan) => withSettings((tx) => rowsFunnel(tx, plan)),
  };
}
