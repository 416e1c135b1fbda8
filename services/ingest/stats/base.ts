/**
 * The relations of aggregate.ts from ingest.visits and the stored rows: any
 * query, without rollups. A visit inside the range, all of one visitor and
 * of humans or of bots alone, is read as ingest.visits keeps it; the few
 * others (those crossing the range's start or end, and mixed ones) are
 * worked out from their rows in the range, found within their bounds.
 * Visits crossing the range's start began at most the site's longest visit
 * before it (ingest.visit_spans), which the index of visits by first time
 * finds.
 */
import {
  FIRST_ROW_ATTRIBUTES,
  KIND,
  pageOf,
  visitColumn,
  visitKeyOf,
  visitorKeyOf,
} from "./dimensions.ts";
import type { Grouping } from "./decide.ts";
import type { Queryable } from "../../lib/db/mod.ts";
import { and, instant, type Params, type Plan, visitFilters } from "./plan.ts";
import { isVisitDimension } from "./query.ts";

const ATTRIBUTES = FIRST_ROW_ATTRIBUTES.map((a) => a.column);

/**
 * The rows of each of the few `visits` (site_id, visit_key, lo, hi) within [lo, hi), found
 * visit by visit by time (`offset 0`: as a join, the planner sorted every row of the range).
 */
export function rowsWithin(visits: string, humansOnly: boolean): string {
  const rows = (table: string, kind: number, extra: string, human: string) =>
    `select ${kind} as kind, x.received_at as at, x.seq, k.visit_key,
            ${visitorKeyOf("x")} as visitor_key, ${extra}
       from ${visits} k
       cross join lateral (
         select * from ${table} x
          where x.site_id = k.site_id and x.received_at >= k.lo and x.received_at < k.hi
            and ${visitKeyOf("x")} = k.visit_key ${humansOnly ? `and ${human}` : ""}
         offset 0) x`;
  return `${rows("ingest.page_views", KIND.pageview, `${pageOf("x")} as page`, "not x.bot")}
    union all ${rows("ingest.events", KIND.event, "null::text", "x.bot is not true")}
    union all ${rows("ingest.leads", KIND.lead, "null::text", "true")}`;
}

/**
 * The human rows of a visit within [lo, hi) (`bounds`: one row of site_id,
 * visit_key, lo, hi) summed: first_at, pageviews, events, duration_ms and
 * exit_page (its last page view there); no row when it has none there.
 */
export function visitPart(bounds: string): string {
  return `select min(at) as first_at,
            (count(*) filter (where kind = ${KIND.pageview}))::int as pageviews,
            (count(*) filter (where kind = ${KIND.event}))::int as events,
            (extract(epoch from max(at) - min(at)) * 1000)::float8 as duration_ms,
            (array_agg(page order by at desc, seq desc)
              filter (where kind = ${KIND.pageview}))[1] as exit_page
       from (${rowsWithin(bounds, true)}) h
      having count(*) > 0`;
}

/** A mixed visit's (alias v) human rows summed, as visitPart answers. */
export const humanPart = (v: string): string =>
  visitPart(`(select ${v}.site_id, ${v}.visit_key, ${v}.first_at as lo,
      ${v}.last_at + interval '1 microsecond' as hi)`);

/** The site's longest visit in ms (ingest.visit_spans), which bounds where crossing visits begin. */
export async function longestVisitMs(db: Queryable, siteId: string): Promise<number> {
  const [row] = await db.query<{ ms: number }>(
    `select ceil(coalesce(extract(epoch from max(longest)), 0) * 1000)::float8 as ms
       from ingest.visit_spans where site_id = $1`,
    [siteId],
  );
  return Number(row.ms);
}

/**
 * The CTE `v` (and with the rows grouping `r`): visits with a row in the
 * range, each with its visitor key, first time, page views, events, leads,
 * duration and exit page there, and its attributes. For the visits grouping,
 * a visit with more than one visitor key in the range has an `extra` line
 * for each key after its first.
 */
export function baseSources(
  plan: Plan,
  params: Params,
  options: { grouping: Grouping; longestVisitMs: number },
): string {
  const { grouping } = options;
  const site = params.add(plan.siteId);
  const from = instant(params, plan.startMs);
  // A plain instant, not a subquery: the planner then sees how much of the table the range
  // covers and scans a long range instead of visiting the index row by row.
  const earliest = instant(params, plan.startMs - options.longestVisitMs);
  const to = instant(params, plan.endMs);
  const humansOnly = !plan.query.includeBots;
  const attrs = (alias: string) => ATTRIBUTES.map((c) => `${alias}.${c}`).join(", ");
  // Filters on a visit's stored attributes already hold for its ingest.visits row, so only
  // the visits they keep are read on (the exit page is worked out again for crossing visits).
  const kept = plan.query.filters.filter((f) =>
    isVisitDimension(f.dimension) && ATTRIBUTES.includes(visitColumn(f.dimension))
  );
  const attributeFilters = and(visitFilters({ ...plan.query, filters: kept }, params));
  const visits = `
    vt as (
      select * from ingest.visits
       where site_id = ${site} and first_at >= ${earliest}
         and first_at < ${to} and last_at >= ${from}
         ${humansOnly ? "and (mixed or not bot)" : ""} and ${attributeFilters}),
    edges as (
      select site_id, visit_key, greatest(first_at, ${from}) as lo,
             least(last_at + interval '1 microsecond', ${to}) as hi
        from vt where first_at < ${from} or last_at >= ${to} or mixed),
    edge_rows as (${rowsWithin("edges", humansOnly)}),
    edge_visits as (
      select visit_key, min(at) as first_at,
             (count(*) filter (where kind = ${KIND.pageview}))::int as pv,
             (count(*) filter (where kind = ${KIND.event}))::int as ev,
             (count(*) filter (where kind = ${KIND.lead}))::int as ld,
             round(extract(epoch from max(at) - min(at)) * 1000)::bigint as dur_ms,
             (array_agg(page order by at desc, seq desc)
               filter (where kind = ${KIND.pageview}))[1] as exit_page,
             array_agg(distinct visitor_key) as visitor_keys
        from edge_rows group by visit_key),
    v as (
      select visit_key, visitor_key, false as extra, first_at, pageviews as pv, events as ev,
             leads as ld, round(extract(epoch from last_at - first_at) * 1000)::bigint as dur_ms,
             exit_page, ${attrs("vt")}
        from vt where first_at >= ${from} and last_at < ${to} and not mixed
      union all
      select e.visit_key, k.visitor_key, k.n > 1, e.first_at, e.pv, e.ev, e.ld, e.dur_ms,
             e.exit_page, ${attrs("t")}
        from edge_visits e join vt t using (visit_key)
        cross join lateral unnest(e.visitor_keys) with ordinality k(visitor_key, n)
       where ${grouping === "visits" ? "true" : "k.n = 1"})`;
  if (grouping === "visits") return visits;
  const rows = (table: string, kind: number, extra: string, human: string) =>
    `select ${kind} as kind, x.received_at as at, x.seq, ${visitKeyOf("x")} as visit_key,
            ${visitorKeyOf("x")} as visitor_key, ${extra}
       from ${table} x
      where x.site_id = ${site} and x.received_at >= ${from} and x.received_at < ${to}
        ${humansOnly ? `and ${human}` : ""}`;
  return `${visits},
    r as (
      ${
    rows(
      "ingest.page_views",
      KIND.pageview,
      `null::text as name, null::bigint as value, null::text as currency, ${
        pageOf("x")
      } as page, null::json as props`,
      "not x.bot",
    )
  }
      union all
      ${
    rows(
      "ingest.events",
      KIND.event,
      `x.name, x.value, x.currency, ${pageOf("x")}, x.params`,
      "x.bot is not true",
    )
  }
      union all
      ${rows("ingest.leads", KIND.lead, "null, null, null, null, null", "true")})`;
}
