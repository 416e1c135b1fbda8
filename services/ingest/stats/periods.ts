/**
 * Visit sums per local period (ingest.visit_attribute_periods,
 * ingest.visit_attribute_sums): for each period of a site (a local day, week
 * or month, as its first and end instants), for all visits and per value of
 * each visit attribute (channel, source, UTM tags, entry page, country, ...),
 * the visitors, page views, events and leads of its slices that are not
 * bots, and the visits that begin in it (their first row that is not a bot)
 * with their bounces, duration and page views, whole. The Traffic query
 * (days by channel), the 12-month visitors query and the dashboard's
 * breakdowns read them instead of every slice of their range: distinct
 * visitors and grouped visits are what made those queries take seconds at
 * ten million page views.
 *
 * Built in the background (buildPeriodSums) for periods that have ended.
 * Each period's row holds the number of changes counted on the UTC days it
 * covers (ingest.stat_day_changes, counted by every path that changes slices
 * or visits, in its own transaction: derived.ts) when its sums were made, in
 * the same statement: a query uses the sums only while that number is the
 * same, and computes any other period from the slices with the same SQL.
 * Reads stay exact whatever the builder has done.
 *
 * A visit is counted whole in the period it begins in; a query counts only
 * the part of a visit inside its range, so visits crossing the range's start
 * or end are counted again from their slices. Such visits began at most the
 * site's longest visit (ingest.visit_spans) before the instant they cross,
 * which the index of visits by first time finds.
 *
 * A query without dimensions (the dashboard's summary) adds up the sums of
 * its range's whole months and other days; its distinct visitors, which no
 * sum of periods gives, come from the visitors by previous day (returns.ts);
 * so do those of each value of a breakdown by one attribute.
 */
import type { Database, Queryable } from "../../lib/db/mod.ts";
import type { PartRow } from "./aggregate.ts";
import { bucketsOf, localDay, startOfDay } from "./calendar.ts";
import { bucket15, QUARTER_HOUR_MS, storedRows } from "./derived.ts";
import {
  and,
  attributeKeys,
  attributeSets,
  bucketOf,
  bucketParams,
  filterCondition,
  iso,
  levels,
  Params,
  type Plan,
  valueOfKey,
  VISIT_ATTRIBUTES,
  VISIT_COLUMN,
} from "./plan.ts";
import {
  grainOf,
  isVisitDimension,
  type MetricName,
  type TimeDimension,
  type VisitDimension,
} from "./query.ts";
import { rangeVisitorsCtes } from "./returns.ts";
import { underBuilderLock } from "./builder_lock.ts";

const DAY_MS = 86_400_000;

/** The time dimensions whose periods are kept. */
const PERIOD_TIMES: TimeDimension[] = ["time:day", "time:week", "time:month"];

/** The metrics the period sums hold. */
const PERIOD_METRICS: MetricName[] = [
  "revenue",
  "pageviews",
  "events",
  "leads",
  "visitors",
  "visits",
  "bounce_rate",
  "visit_duration",
  "views_per_visit",
];

/** A period as its first instant and end (exclusive), in epoch ms. */
export interface Period {
  start: number;
  end: number;
}

/**
 * The periods a query reads: its time dimension (none for a query without
 * dimensions), and each period with its label id (0 without a time
 * dimension).
 */
interface QueryPeriods {
  time?: TimeDimension;
  periods: (Period & { labelId: number })[];
}

/**
 * The periods of a query the period sums answer, or undefined: a day, week
 * or month dimension, alone or with one visit: dimension, one visit:
 * dimension alone (its values' visitors by previous day), or no dimension
 * at all; totals or not (their visitors by previous day); no filters but on
 * one visit: attribute (the values' sums added up, so no visitors), rows
 * that are not bots, and only metrics of page views, events, leads,
 * visitors and visits. The periods are those of the query's zone
 * over its whole range (without dimensions, its whole months and its other
 * days: coverOf); every boundary must be a 15-minute mark, as the slices'
 * buckets are.
 */
export function queryPeriods(plan: Plan): QueryPeriods | undefined {
  const { query } = plan;
  if (query.includeBots || !query.metrics.every((m) => PERIOD_METRICS.includes(m))) {
    return undefined;
  }
  // Filters on one visit: attribute pick its values' sums, which add up for every metric but
  // visitors; the query may then group by that attribute, not by another.
  const filtered = [...new Set(query.filters.map((f) => f.dimension))];
  if (filtered.length > 1 || filtered.some((d) => !isVisitDimension(d))) return undefined;
  if (filtered.length === 1 && query.metrics.includes("visitors")) return undefined;
  const aligned = (periods: Period[]) =>
    periods.every((p) => p.start % QUARTER_HOUR_MS === 0 && p.end % QUARTER_HOUR_MS === 0);
  const times = PERIOD_TIMES.filter((d) => query.dimensions.includes(d));
  const others = query.dimensions.filter((d) => !PERIOD_TIMES.includes(d as TimeDimension));
  if (times.length > 1 || others.length > 1 || others.some((d) => !isVisitDimension(d))) {
    return undefined;
  }
  if (filtered.length === 1 && others.length === 1 && others[0] !== filtered[0]) return undefined;
  if (times.length === 0) {
    const periods = coverOf(plan.zone, plan.startMs, plan.endMs);
    return aligned(periods) ? { periods: periods.map((p) => ({ ...p, labelId: 0 })) } : undefined;
  }
  const time = times[0];
  const labels = plan.buckets.get(time)!.labels;
  const buckets = bucketsOf(grainOf(time), plan.zone, plan.startMs, plan.endMs);
  const periods = buckets.starts.map((start, i) => ({
    start,
    end: buckets.starts[i + 1] ?? plan.endMs,
    // A period outside the plan's buckets holds no data; its sums are empty.
    labelId: labels.indexOf(buckets.labels[buckets.labelIds[i]]),
  }));
  return aligned(periods) ? { time, periods } : undefined;
}

/**
 * Local periods in `zone` that together are [from, to): its whole months,
 * and the days of any part of a month at its ends (as the builder keys
 * them, so those that have ended can have sums).
 */
export function coverOf(zone: string, from: number, to: number): Period[] {
  const isMonthStart = (ms: number) => {
    const day = localDay(ms, zone);
    return day.day === 1 && startOfDay(day, zone) === ms;
  };
  const months = bucketsOf("month", zone, from, to).starts;
  const out: Period[] = [];
  months.forEach((start, i) => {
    const end = months[i + 1] ?? to;
    if (isMonthStart(start) && (i + 1 < months.length || isMonthStart(to))) {
      out.push({ start, end });
      return;
    }
    const days = bucketsOf("day", zone, start, end).starts;
    days.forEach((day, j) => out.push({ start: day, end: days[j + 1] ?? end }));
  });
  return out;
}

/** The site's longest visit, as a relation `span(longest)`. */
const spanOf = (site: string) =>
  `(select coalesce((select longest from ingest.visit_spans where site_id = ${site}),
                    interval '0') as longest)`;

/**
 * Visits that cross `at` (an SQL instant): rows before it and at or after
 * it. Begun within the longest visit before it (the index of visits by first
 * time), bots included: a superset, which their slices then settle.
 */
const crossing = (site: string, at: string) =>
  `select visit_key, first_seen, last_seen from ingest.visits v
    where v.site_id = ${site} and v.first_seen >= ${at} - sp.longest and v.first_seen < ${at}
      and v.last_seen >= ${at}`;

/**
 * A visit's slices that are not bots, summed (alias `c`: visit_key,
 * first_seen, last_seen): its attributes `attributes`, first and last time,
 * page views and events, whole and (with `range`, SQL instants) inside the
 * range.
 */
const visitTotals = (site: string, attributes: readonly string[], range?: [string, string]) => {
  const inside = range ? `s.bucket >= ${range[0]} and s.bucket < ${range[1]}` : "";
  const within = (agg: string, col: string) => `${agg}(${col}) filter (where ${inside})`;
  return `select ${attributes.map((a) => `min(s.${a}) as ${a}, `).join("")}
                 min(s.first_at) as h_first, max(s.last_at) as h_last,
                 sum(s.pageviews) as pv, sum(s.events) as ev${
    range
      ? `, ${within("min", "s.first_at")} as r_first, ${within("max", "s.last_at")} as r_last,
           ${within("sum", "s.pageviews")} as r_pv, ${within("sum", "s.events")} as r_ev`
      : ""
  }
            from ingest.visit_slices s
           where s.site_id = ${site} and s.bucket >= ${bucket15("c.first_seen")}
             and s.bucket <= c.last_seen and s.visit_key = c.visit_key and not s.bot`;
};

/** The columns of a period's sums, after its period (ingest.visit_attribute_sums, ps_sums). */
const SUM_COLUMNS = [
  "attribute",
  "value_key",
  "visitors",
  "pageviews",
  "events",
  "leads",
  "visits",
  "bounces",
  "duration_ms",
  "visit_pageviews",
];

/** Which keys of the period sums to compute: per value of each attribute, and for all visits. */
export interface AttributeScope {
  attributes: readonly string[];
  all: boolean;
}

/**
 * CTEs computing the sums of the periods of relation `periods` (ps, pe) from
 * the slices, ending in `ps_sums` (ps, pe, attribute, value_key, visitors,
 * pageviews, events, leads, visits, bounces, duration_ms, visit_pageviews):
 * one row per period, attribute of `scope.attributes` and value with slices;
 * with `scope.all`, one with attribute '*' per period. And `ps_revenue` (ps,
 * pe, attribute, value_key, currency, revenue): the revenue of the periods'
 * valued events, keyed alike. The builder keeps them all; a query computes
 * only the rows it reads.
 */
export function periodSumsCtes(
  site: string,
  periods: string,
  scope: AttributeScope = { attributes: VISIT_ATTRIBUTES, all: true },
): string {
  const attrs = scope.attributes;
  const list = (alias: string) => attrs.map((a) => `, ${alias}${a}`).join("");
  const keys = (alias: string) => attributeKeys(alias, attrs, scope.all);
  const sets = attributeSets("ps, pe", attrs, scope.all);
  const revenueSets = attributeSets("ps, pe, currency", attrs, scope.all);
  return `ps_s as not materialized (
      select p.ps, p.pe, s.visit_key, s.visitor_key, s.first_at, s.last_at, s.pageviews,
             s.events, s.leads${list("s.")}
        from ${periods} p cross join lateral (
          select * from ingest.visit_slices s
           where s.site_id = ${site} and s.bucket >= p.ps and s.bucket < p.pe and not s.bot) s),
    ps_vt as (
      -- Per visitor and combination of values; tuples: how many combinations the visitor has.
      select ps, pe, visitor_key${list("")}, sum(pageviews) as pv, sum(events) as ev,
             sum(leads) as ld,
             count(*) over (partition by ps, pe, visitor_key collate "C") as tuples
        from ps_s group by ps, pe, visitor_key${list("")}),
    ps_r as (
      -- A visitor with one combination counts once under each of its values, in one pass over
      -- the grouping sets; the few with more are listed under every key and made distinct.
      select ps, pe, attribute, value_key, sum(visitors) as visitors, sum(pv) as pageviews,
             sum(ev) as events, sum(ld) as leads
        from (select ps, pe, ${sets.columns}, count(*) filter (where tuples = 1) as visitors,
                     sum(pv) as pv, sum(ev) as ev, sum(ld) as ld
                from ps_vt ${sets.groupBy}
              union all
              select ps, pe, attribute, value_key, count(*), 0, 0, 0
                from (select distinct t.ps, t.pe, k.attribute, k.value_key, t.visitor_key
                        from ps_vt t ${keys("t")} where t.tuples > 1) m
               group by 1, 2, 3, 4) x
       group by 1, 2, 3, 4),
    ps_cross as (
      select distinct p.ps, p.pe, v.visit_key, v.first_seen, v.last_seen
        from ${periods} p cross join ${spanOf(site)} sp cross join lateral (
          ${crossing(site, "p.ps")} union all ${crossing(site, "p.pe")}) v),
    ps_whole as (
      select c.ps, c.pe, w.* from ps_cross c cross join lateral (${visitTotals(site, attrs)}) w),
    ps_visits as (
      select ps, pe${attrs.map((a) => `, min(${a}) as ${a}`).join("")}, sum(pageviews) as pv,
             sum(events) as ev,
             round(extract(epoch from max(last_at) - min(first_at)) * 1000)::bigint as dur_ms
        from ps_s s
       where not exists (select 1 from ps_cross c
                          where c.ps = s.ps and c.pe = s.pe and c.visit_key = s.visit_key)
       group by ps, pe, visit_key
      union all
      select ps, pe${list("")}, pv, ev, round(extract(epoch from h_last - h_first) * 1000)::bigint
        from ps_whole where h_first >= ps and h_first < pe),
    ps_v as (
      -- Duration and page views per visit as the visits path computes them (derived_engine.ts).
      select ps, pe, ${sets.columns}, count(*) as visits,
             count(*) filter (where pv = 1 and ev = 0) as bounces,
             coalesce(sum(dur_ms), 0)::bigint as duration_ms,
             coalesce(sum(pv), 0)::bigint as visit_pageviews
        from ps_visits ${sets.groupBy}),
    ps_sums as (
      select r.ps, r.pe, r.attribute, r.value_key, r.visitors, r.pageviews, r.events, r.leads,
             coalesce(v.visits, 0) as visits, coalesce(v.bounces, 0) as bounces,
             coalesce(v.duration_ms, 0) as duration_ms,
             coalesce(v.visit_pageviews, 0) as visit_pageviews
        from ps_r r left join ps_v v
          on v.ps = r.ps and v.pe = r.pe and v.attribute = r.attribute
         and v.value_key = r.value_key),
    ps_revenue as (
      -- The periods' valued events that are not bots, each joined to its own slice (the
      -- slices' key) for its visit's values. Offset 0 keeps the events a probe per period:
      -- pulled up into a join, Postgres read every valued event of the site (3.4 s for the
      -- 30-day Ad channels at ten million page views, when no period was missing at all).
      select ps, pe, ${revenueSets.columns}, currency, sum(revenue) as revenue
        from (select p.ps, p.pe, e.currency, e.value as revenue${list("s.")}
                from ${periods} p cross join lateral (${
    storedRows(
      "event",
      `x.site_id = ${site} and x.received_at >= p.ps and x.received_at < p.pe
       and x.value is not null and x.currency is not null`,
    )
  } offset 0) e
                join ingest.visit_slices s
                  on s.site_id = e.site_id and s.bucket = ${bucket15("e.at")}
                 and s.visit_key = e.visit_key and s.visitor_key = e.visitor_key
                 and s.bot = e.bot
               where not e.bot) v
       ${revenueSets.groupBy})`;
}

/** The changes counted on the UTC days a period (alias `p`: ps, pe) covers, now. */
const changesOf = (site: string) =>
  `(select coalesce(sum(c.changes), 0)::bigint from ingest.stat_day_changes c
     where c.site_id = ${site} and c.day < p.pe and c.day > p.ps - interval '1 day')`;

/** The statement of a query the period sums answer (queryPeriods). */
export function periodsSql(plan: Plan, qp: QueryPeriods, params: Params): string {
  const { query } = plan;
  const site = params.add(plan.siteId);
  const array = (values: (string | number)[], type: string) =>
    `(select ${params.add(`{${values.join(",")}}`)}::text::${type}[])`;
  const ps = array(qp.periods.map((p) => iso(p.start)), "timestamptz");
  const pe = array(qp.periods.map((p) => iso(p.end)), "timestamptz");
  const g = array(qp.periods.map((p) => p.labelId), "int");
  const from = `${params.add(iso(plan.startMs))}::timestamptz`;
  const to = `${params.add(iso(plan.endMs))}::timestamptz`;
  const buckets = qp.time ? bucketParams(plan.buckets.get(qp.time)!, params) : undefined;
  // The query's visit: attribute, if any (queryPeriods allows one).
  // The query's visit: attribute, if any: its dimension or its filters' (queryPeriods allows one).
  const filtered = query.filters.length > 0;
  const visitDimension = query.dimensions.find(isVisitDimension) ?? query.filters[0]?.dimension;
  const attribute = visitDimension ? VISIT_COLUMN[visitDimension as VisitDimension] : undefined;
  // The values the filters keep, as the slices' columns would be filtered (null for none).
  const matching = and(
    query.filters.map((f) => filterCondition(f, valueOfKey("value_key"), params)),
  );
  const dims = query.dimensions.map((d) => d === qp.time ? "g::text" : valueOfKey("value_key"));
  const dimCols = [0, 1, 2].map((i) => `${dims[i] ?? "null::text"} as d${i}`).join(", ");
  const grouped = `attribute = '${attribute ?? "*"}' and ${matching}`;
  // The totals: all visits, or with filters the values they keep, added up.
  const whole = filtered ? grouped : "attribute = '*'";
  const sumColumns = SUM_COLUMNS.map((c) => `s.${c}`).join(", ");
  // The totals (the whole answer without dimensions) sum every period of all visits; their
  // visitors, a distinct count over the whole range, come from the visitors by previous day.
  const levelsOf = levels(query);
  const groups = levelsOf.includes("g");
  const totals = levelsOf.includes("");
  const scope: AttributeScope = {
    attributes: attribute ? [attribute] : [],
    all: !attribute || (totals && !filtered),
  };
  const wanted = [...scope.attributes, ...(scope.all ? ["*"] : [])].map((a) => `'${a}'`);
  // One visit's correction: taken off where the sums count it whole, counted where the
  // query counts it (its part inside the range). Under the query's attribute and all visits.
  const correction = (sign: string, first: string, last: string, pv: string, ev: string) =>
    `select ${buckets ? bucketOf(first, buckets) : "0"} as g, k.attribute, k.value_key,
            ${sign}1 as visits,
            ${sign}(case when ${pv} = 1 and ${ev} = 0 then 1 else 0 end) as bounces,
            ${sign}round(extract(epoch from ${last} - ${first}) * 1000)::bigint as duration_ms,
            ${sign}${pv} as visit_pageviews`;
  // Visitors of the whole range, all visits for the totals and per value for groups that
  // are an attribute alone (no time dimension), come from the visitors by previous day:
  // they are no sum of the periods' visitors.
  const visitorScope = query.metrics.includes("visitors")
    ? { attribute: groups && !qp.time ? attribute : undefined, all: totals }
    : { attribute: undefined, all: false };
  const wantsVisitors = visitorScope.all || visitorScope.attribute !== undefined;
  const visitRows =
    `(select g, attribute, value_key, visits, bounces, duration_ms, visit_pageviews from sums
              union all
              select g, attribute, value_key, visits, bounces, duration_ms, visit_pageviews
                from corrections) x`;
  // Revenue per period from the sums: the periods are the range, no visit crosses into it.
  const revenue = query.metrics.includes("revenue");
  const answers = [
    ...(groups && revenue
      ? [`select 'm' as part, ${dimCols}, sum(revenue)::text as n1, null::text as n2,
                 null::text as n3, null::text as n4, currency as cur
            from revenue where ${grouped} and g >= 0 group by g, value_key, currency`]
      : []),
    ...(totals && revenue
      ? [`select 'M' as part, null::text as d0, null::text as d1, null::text as d2,
                 sum(revenue)::text as n1, null::text as n2, null::text as n3, null::text as n4,
                 currency as cur
            from revenue where ${whole} and g >= 0 group by currency`]
      : []),
    ...(groups
      ? [
        `select 'r' as part, ${dimCols}, pageviews::text as n1, events::text as n2,
                leads::text as n3, ${qp.time ? "visitors::text" : "null::text"} as n4,
                null::text as cur
           from sums where ${grouped} and g >= 0`,
        ...(visitorScope.attribute
          ? [`select 'r', ${dimCols}, null, null, null, visitors::text, null
                from rv where attribute <> '*'`]
          : []),
        `select 'v', ${dimCols}, sum(visits)::text, sum(bounces)::text, sum(duration_ms)::text,
                sum(visit_pageviews)::text, null
           from ${visitRows}
          where ${grouped} and g >= 0
          group by g, value_key having sum(visits) > 0`,
      ]
      : []),
    ...(totals
      ? [
        `select 'R' as part, null::text as d0, null::text as d1, null::text as d2,
                sum(pageviews)::text as n1, sum(events)::text as n2, sum(leads)::text as n3,
                null::text as n4, null::text as cur
           from sums where ${whole} and g >= 0`,
        `select 'V', null, null, null, sum(visits)::text, sum(bounces)::text,
                sum(duration_ms)::text, sum(visit_pageviews)::text, null
           from ${visitRows}
          where ${whole} and g >= 0 having sum(visits) > 0`,
      ]
      : []),
    ...(visitorScope.all
      ? [`select 'R', null, null, null, null, null, null,
                 coalesce((select visitors from rv where attribute = '*'), 0)::text, null`]
      : []),
  ];
  return `with p as (select * from unnest(${ps}, ${pe}, ${g}) p(ps, pe, g)),
    valid as (
      select v.period_start as ps, v.period_end as pe
        from ingest.visit_attribute_periods v
        join p on v.period_start = p.ps and v.period_end = p.pe
       where v.site_id = ${site} and v.changes = ${changesOf(site)}),
    missing as (select ps, pe from p where (ps, pe) not in (select ps, pe from valid)),
    ${periodSumsCtes(site, "missing", scope)},
    ${
    revenue
      ? `revenue as (
      select p.g, r.attribute, r.value_key, r.currency, r.revenue
        from ingest.visit_attribute_revenue r
        join p on r.period_start = p.ps and r.period_end = p.pe
       where r.site_id = ${site} and r.attribute in (${wanted.join(", ")})
         and (p.ps, p.pe) in (select ps, pe from valid)
      union all
      select p.g, r.attribute, r.value_key, r.currency, r.revenue
        from ps_revenue r join p on r.ps = p.ps and r.pe = p.pe),`
      : ""
  }
    sums as (
      select p.g, ${sumColumns}
        from ingest.visit_attribute_sums s join p on s.period_start = p.ps and s.period_end = p.pe
       where s.site_id = ${site} and s.attribute in (${wanted.join(", ")})
         and (p.ps, p.pe) in (select ps, pe from valid)
      union all
      select p.g, ${sumColumns} from ps_sums s join p on s.ps = p.ps and s.pe = p.pe),
    ends as (
      select distinct v.visit_key, v.first_seen, v.last_seen
        from ${spanOf(site)} sp cross join lateral (
          ${crossing(site, from)} union all ${crossing(site, to)}) v),
    ends_whole as (
      select w.* from ends c
       cross join lateral (${visitTotals(site, scope.attributes, [from, to])}) w),
    corrections as (
      ${correction("-", "h_first", "h_last", "pv", "ev")}
        from ends_whole e ${attributeKeys("e", scope.attributes, scope.all)}
       where h_first >= ${from} and h_first < ${to}
      union all
      ${correction("", "r_first", "r_last", "r_pv", "r_ev")}
        from ends_whole e ${attributeKeys("e", scope.attributes, scope.all)}
       where r_first is not null),
    ${
    wantsVisitors
      ? `${rangeVisitorsCtes(site, plan.startMs, plan.endMs, params, visitorScope)},`
      : ""
  }
    answer as (${answers.join("\n      union all\n      ")})
    select * from answer`;
}

/**
 * The rows of the partial sums of a plan from the period sums (readParts reads
 * them), without its revenue; undefined when they do not answer it.
 */
export async function periodRows(db: Queryable, plan: Plan): Promise<PartRow[] | undefined> {
  const qp = queryPeriods(plan);
  if (!qp) return undefined;
  const params = new Params();
  return await db.query<PartRow>(periodsSql(plan, qp, params), params.list);
}

/**
 * The periods of every grain in `zone` that cover the UTC days `days` (epoch
 * ms of their starts) and have ended by `nowMs`, newest first.
 */
export function periodsToBuild(days: number[], zone: string, nowMs: number): Period[] {
  if (days.length === 0) return [];
  const first = Math.min(...days);
  const last = Math.max(...days) + DAY_MS;
  // Padded by more than a month, so that the first and last buckets (cut off) hold no data.
  const from = startOfDay(localDay(first, zone).subtract({ days: 40 }), zone);
  const to = startOfDay(localDay(last, zone).add({ days: 40 }), zone);
  const covered = new Set(days);
  const out = new Map<string, Period>();
  for (const time of PERIOD_TIMES) {
    const { starts } = bucketsOf(grainOf(time), zone, from, to);
    for (let i = 1; i + 1 < starts.length; i++) {
      const period = { start: starts[i], end: starts[i + 1] };
      if (period.end > nowMs) continue;
      const firstDay = Math.floor(period.start / DAY_MS) * DAY_MS;
      let holdsData = false;
      for (let d = firstDay; d < period.end && !holdsData; d += DAY_MS) holdsData = covered.has(d);
      if (holdsData) out.set(`${period.start}/${period.end}`, period);
    }
  }
  return [...out.values()].sort((a, b) => b.end - a.end || b.start - a.start);
}

/**
 * The periods built in one statement: at most 8, together at most 31 days
 * long (a month alone), so one statement stays short (a month of ten million
 * page views over 13 months took about 1.5 s) and a stop waits for at most one.
 */
export function inStatements(periods: Period[]): Period[][] {
  const out: Period[][] = [];
  let chunk: Period[] = [];
  let length = 0;
  for (const p of periods) {
    if (chunk.length === 8 || (chunk.length > 0 && length + (p.end - p.start) > 31 * DAY_MS)) {
      out.push(chunk);
      chunk = [];
      length = 0;
    }
    chunk.push(p);
    length += p.end - p.start;
  }
  if (chunk.length > 0) out.push(chunk);
  return out;
}

/** What one build did. */
export interface PeriodBuild {
  built: number;
  /** Periods found current. */
  current: number;
  /** Periods no longer listed (another zone's, or without rows left) whose sums were deleted. */
  removed: number;
}

/**
 * Builds the period sums of a site in `zone` that are missing or stale, for
 * periods that have ended, and deletes those of periods no longer listed.
 * One transaction per few periods: their old sums are deleted and new ones
 * computed with the changes they were computed at, in one statement (one
 * snapshot). A builder that finds another building the site stops
 * (underSiteLock); so does one whose `signal` is aborted, between
 * statements.
 */
export async function buildPeriodSums(
  db: Database,
  siteId: string,
  zone: string,
  nowMs: number,
  signal?: AbortSignal,
): Promise<PeriodBuild> {
  const ms = (at: string) => `(extract(epoch from ${at}) * 1000)::bigint::text`;
  // The UTC days with rows or changes.
  const days = await db.query<{ day: string }>(
    `select ${ms("day")} as day
       from (select day from ingest.stat_day_changes where site_id = $1
             union select day from ingest.stat_counter_days where site_id = $1) d`,
    [siteId],
  );
  const periods = periodsToBuild(days.map((d) => Number(d.day)), zone, nowMs);
  // Whether each stored period is current is decided as the queries decide it (changesOf).
  const stored = await db.query<{ ps: string; pe: string; current: boolean }>(
    `select ${ms("ps")} as ps, ${ms("pe")} as pe, changes = ${changesOf("$1")} as current
       from (select period_start as ps, period_end as pe, changes
               from ingest.visit_attribute_periods where site_id = $1) p`,
    [siteId],
  );
  const current = new Set(stored.filter((r) => r.current).map((r) => `${r.ps}/${r.pe}`));
  const stale = periods.filter((p) => !current.has(`${p.start}/${p.end}`));
  // Sums of periods no longer listed: another zone's (the site's zone changed), or days whose
  // rows retention removed.
  const listed = new Set(periods.map((p) => `${p.start}/${p.end}`));
  const gone = stored.filter((r) => !listed.has(`${r.ps}/${r.pe}`))
    .map((r) => ({ start: Number(r.ps), end: Number(r.pe) }));
  let removed = 0;
  if (gone.length > 0 && await underSiteLock(db, siteId, (tx) => deletePeriods(tx, siteId, gone))) {
    removed = gone.length;
  }
  let built = 0;
  for (const chunk of inStatements(stale)) {
    if (signal?.aborted) break;
    const done = await underSiteLock(db, siteId, async (tx) => {
      await deletePeriods(tx, siteId, chunk);
      await tx.query(
        `with periods as (select * from ${PERIODS_OF}),
         ${periodSumsCtes("$1", "periods")},
         marked as (
           insert into ingest.visit_attribute_periods (site_id, period_start, period_end, changes)
             select $1, p.ps, p.pe, ${changesOf("$1")} from periods p returning 1),
         revenue as (
           insert into ingest.visit_attribute_revenue
             select $1, ps, pe, attribute, value_key, currency, revenue from ps_revenue)
         insert into ingest.visit_attribute_sums
           select $1, ps, pe, ${SUM_COLUMNS.join(", ")} from ps_sums`,
        [siteId, ...periodArrays(chunk)],
      );
    });
    if (!done) break;
    built += chunk.length;
  }
  return { built, current: periods.length - stale.length, removed };
}

/** Periods as the parameters $2 and $3 of PERIODS_OF. */
const periodArrays = (periods: Period[]) =>
  [periods.map((p) => p.start), periods.map((p) => p.end)].map((ms) =>
    `{${ms.map(iso).join(",")}}`
  );
const PERIODS_OF = "unnest($2::text::timestamptz[], $3::text::timestamptz[]) p(ps, pe)";

/** Deletes the sums of the listed periods of a site. */
async function deletePeriods(tx: Queryable, siteId: string, periods: Period[]): Promise<void> {
  for (
    const table of [
      "ingest.visit_attribute_sums",
      "ingest.visit_attribute_revenue",
      "ingest.visit_attribute_periods",
    ]
  ) {
    await tx.query(
      `delete from ${table} t using ${PERIODS_OF}
        where t.site_id = $1 and t.period_start = p.ps and t.period_end = p.pe`,
      [siteId, ...periodArrays(periods)],
    );
  }
}

/** Runs `fn` under the site's period-sums builder lock; false, without running it, when held. */
async function underSiteLock(
  db: Database,
  siteId: string,
  fn: (tx: Queryable) => Promise<void>,
): Promise<boolean> {
  return (await underBuilderLock(db, "visit_attribute_periods", siteId, async (tx) => {
    await fn(tx);
    return true;
  })) ?? false;
}

/** Builds the period sums of every site in its own zone (UTC without one), stale ones first. */
export async function buildAllPeriodSums(
  db: Database,
  nowMs: number,
  signal?: AbortSignal,
): Promise<PeriodBuild> {
  const sites = await db.query<{ site_id: string; time_zone: string | null }>(
    `select d.site_id, s.time_zone
       from (select site_id from ingest.stat_day_changes
             union select site_id from ingest.stat_counter_days) d
       left join ingest.sites s using (site_id)
      order by 1`,
  );
  const total: PeriodBuild = { built: 0, current: 0, removed: 0 };
  for (const site of sites) {
    if (signal?.aborted) break;
    const done = await buildPeriodSums(db, site.site_id, site.time_zone || "UTC", nowMs, signal);
    total.built += done.built;
    total.current += done.current;
    total.removed += done.removed;
  }
  return total;
}
