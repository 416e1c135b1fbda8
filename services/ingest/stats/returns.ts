/**
 * Distinct visitors of a long range without reading its slices: per UTC day,
 * how many of its visitors (slices that are not bots) had their previous such
 * day when (ingest.visitor_attribute_returns: day, since, visitors; since
 * '-infinity' for none). The visitors of whole days [P, Q) are then
 *
 *   sum(visitors) over days d in [P, Q) with since < P
 *
 * (a visitor counts on the first of their days in the range, the one whose
 * previous day lies before it), a few hundred rows a year instead of the
 * distinct count over millions of slices that took seconds at ten million
 * page views. The range's parts outside whole built days (its partial first
 * and last UTC days, and days not built yet) are read from the slices, and
 * their visitors counted when they have no slice in [P, Q), which the index
 * of slices by visitor answers per visitor. The counts are kept for all
 * visits (attribute '*') and per value of every visit attribute (valueKey),
 * where a visitor's previous day is their previous day of that value: a
 * breakdown's visitors per value are counted the same way.
 *
 * Built in the background (buildVisitorDays) for UTC days that have ended,
 * in ascending order: a day's previous days depend on every earlier day, so
 * each day's build row (ingest.visitor_attribute_builds) keeps the changes
 * counted on the site's UTC days up to and including it
 * (ingest.stat_day_changes, counted by every path that changes slices, in
 * its own transaction) when it was built. A day is current while that number
 * is unchanged; a change on any day makes it and every later day stale, and
 * the builder builds them again from there. A day is built only while the
 * day before it is current, checked in the statement that builds it, so a
 * current day always rests on current days. Reads stay exact whatever the
 * builder has done. The days are UTC days so that nothing depends on the
 * site's zone: a zone changes only how much of a range's ends is read from
 * the slices.
 */
import type { Database } from "../../lib/db/mod.ts";
import {
  attributeKeys,
  attributeSets,
  iso,
  type Params,
  valueKey,
  VISIT_ATTRIBUTES,
} from "./plan.ts";
import { buildEverySite, underBuilderLock } from "./builder_lock.ts";

const DAY_MS = 86_400_000;
/** Days built in one statement: a month of ten million page views is a few seconds' work. */
const DAYS_PER_STATEMENT = 31;

/** The changes counted on the site's UTC days up to and including `day` (SQL), now. */
const changesThrough = (site: string, day: string) =>
  `(select coalesce(sum(c.changes), 0)::bigint from ingest.stat_day_changes c
     where c.site_id = ${site} and c.day <= ${day})`;

/**
 * The days of site `site` (SQL) whose build is current: the changes counted
 * up to each are still those it was built with. One window over the build
 * rows and the day changes; the builder and the queries both decide by it.
 */
const currentDays = (site: string) =>
  `select day from (
     select b.changes_through, coalesce(b.day, c.day) as day,
            sum(coalesce(c.changes, 0)) over (order by coalesce(b.day, c.day)) as through
       from (select day, changes_through from ingest.visitor_attribute_builds
              where site_id = ${site}) b
       full join (select day, changes from ingest.stat_day_changes where site_id = ${site}) c
         on c.day = b.day) m
    where changes_through = through`;

/** What one build did. */
export interface VisitorDaysBuild {
  /** UTC days built. */
  built: number;
}

/**
 * Builds the visitors by previous day of a site's UTC days that are missing
 * or stale, for UTC days that have ended by `nowMs`, oldest first, a month
 * of days per transaction
 * (under the site's builder lock, as the period sums are). Stops, between
 * transactions, when `signal` is aborted or another builder holds the site.
 */
export async function buildVisitorDays(
  db: Database,
  siteId: string,
  nowMs: number,
  signal?: AbortSignal,
): Promise<VisitorDaysBuild> {
  const lastEnd = Math.floor(nowMs / DAY_MS) * DAY_MS;
  // The first day, from the site's first with data or changes, whose build is not current:
  // every day from there on is built again.
  const [found] = await db.query<{ stale: string | null }>(
    `with first as (
       select min(day) as day
         from (select day from ingest.stat_day_changes where site_id = $1
               union select day from ingest.stat_counter_days where site_id = $1) d)
     select (extract(epoch from min(g)) * 1000)::bigint::text as stale
       from first, generate_series(first.day, $2::timestamptz - interval '24 hours',
                                   interval '24 hours') g
      where g not in (${currentDays("$1")})`,
    [siteId, iso(lastEnd)],
  );
  if (found.stale === null) return { built: 0 };
  let built = 0;
  for (let from = Number(found.stale); from < lastEnd; from += DAYS_PER_STATEMENT * DAY_MS) {
    if (signal?.aborted) break;
    const to = Math.min(lastEnd, from + DAYS_PER_STATEMENT * DAY_MS);
    const outcome = await buildDayRange(db, siteId, from, to);
    if (outcome === undefined || outcome === 0) break;
    built += outcome;
  }
  return { built };
}

/**
 * Builds the UTC days [fromMs, toMs) of a site in one transaction under the
 * site's builder lock, after deleting the rows of every day from fromMs on
 * (they are built again from there, in order). Answers the days built: none
 * when the day before fromMs is not current (buildSql), undefined when
 * another builder holds the site.
 */
export function buildDayRange(
  db: Database,
  siteId: string,
  fromMs: number,
  toMs: number,
): Promise<number | undefined> {
  return underBuilderLock(db, "visitor_attribute_returns", siteId, async (tx) => {
    for (const table of ["visitor_attribute_returns", "visitor_attribute_builds"]) {
      await tx.query(`delete from ingest.${table} where site_id = $1 and day >= $2`, [
        siteId,
        iso(fromMs),
      ]);
    }
    const [row] = await tx.query<{ days: number }>(buildSql(), [siteId, iso(fromMs), iso(toMs)]);
    return row.days;
  });
}

/**
 * One statement building the UTC days [$2, $3) of site $1: their visitors by
 * previous day, for all visits and per value of every attribute, and their
 * build rows with the changes counted up to each. Builds nothing unless the
 * day before $2 is current, or no day before $2 has data or changes, as seen
 * by this statement (one snapshot with the slices it reads). Answers the
 * days built.
 */
function buildSql(): string {
  const attrs = VISIT_ATTRIBUTES.join(", ");
  const day = "date_bin('24 hours', s.bucket, timestamptz 'epoch')";
  // Each attribute's previous day of the value, as the column `since` of its key.
  const previous = { column: "since", of: (a: string) => `since_${a}`, all: "since_all" };
  const sets = attributeSets("day", VISIT_ATTRIBUTES, true, previous);
  return `with ready as (
      select $2::timestamptz - interval '24 hours' in (${currentDays("$1")})
          or not exists (select 1 from ingest.stat_day_changes
                          where site_id = $1 and day < $2::timestamptz)
         and not exists (select 1 from ingest.stat_counter_days
                          where site_id = $1 and day < $2::timestamptz) as ok),
    days as (
      select g as day from generate_series($2::timestamptz, $3::timestamptz - interval '24 hours',
                                           interval '24 hours') g
       where (select ok from ready)),
    vt as (
      -- Each visitor's days with their combinations of values.
      select distinct s.visitor_key, ${day} as day, ${attrs}
        from ingest.visit_slices s
       where s.site_id = $1 and s.bucket >= $2::timestamptz and s.bucket < $3::timestamptz
         and not s.bot and (select ok from ready)),
    history as (
      -- The same visitors' earlier days: one probe of the index of slices by visitor per
      -- visitor (distinct keeps the subquery a probe, never pulled up into a join that scans
      -- every earlier slice); then these days themselves.
      select v.visitor_key, e.* from (select distinct visitor_key from vt) v
       cross join lateral (
         select distinct ${day} as day, ${attrs} from ingest.visit_slices s
          where s.site_id = $1 and s.visitor_key = v.visitor_key and s.bucket < $2::timestamptz
            and not s.bot) e
      union all
      select visitor_key, day, ${attrs} from vt),
    since as (
      -- Per visitor, day and combination: the visitor's previous day of each of its values
      -- (a visitor has few days: a small join), and their previous day at all.
      select m.visitor_key, m.day, ${VISIT_ATTRIBUTES.map((a) => `m.${a}`).join(", ")},
             ${
    VISIT_ATTRIBUTES.map((a) =>
      `coalesce(max(h.day) filter (where h.${a} is not distinct from m.${a}),
                       timestamptz '-infinity') as since_${a}`
    ).join(",\n             ")
  },
             coalesce(max(h.day), timestamptz '-infinity') as since_all,
             count(*) over (partition by m.visitor_key collate "C", m.day) as combinations
        from vt m left join history h on h.visitor_key = m.visitor_key and h.day < m.day
       group by m.visitor_key, m.day, ${VISIT_ATTRIBUTES.map((a) => `m.${a}`).join(", ")}),
    returns as (
      -- A visitor day with one combination counts once under each of its values, in one pass
      -- over the grouping sets; the few with more are listed under every key, made distinct.
      insert into ingest.visitor_attribute_returns
             (site_id, attribute, value_key, day, since, visitors)
        select $1, attribute, value_key, day, since, sum(n)
          from (select ${sets.columns}, day, count(*) as n
                  from since where combinations = 1 ${sets.groupBy}
                union all
                select attribute, value_key, since, day, count(*)
                  from (select distinct k.attribute, k.value_key, c.visitor_key, c.day, k.since
                          from since c ${attributeKeys("c", VISIT_ATTRIBUTES, true, previous)}
                         where c.combinations > 1) multi
                 group by 1, 2, 3, 4) x
         group by attribute, value_key, day, since returning 1),
    marked as (
      insert into ingest.visitor_attribute_builds (site_id, day, changes_through)
        select $1, d.day, ${changesThrough("$1", "d.day")} from days d returning 1)
    -- returns runs whether read or not, as every data-modifying CTE does.
    select (select count(*) from marked)::int as days`;
}

/** Builds the visitors by previous day of every site with data. */
export function buildAllVisitorDays(
  db: Database,
  nowMs: number,
  signal?: AbortSignal,
): Promise<VisitorDaysBuild> {
  return buildEverySite(db, (siteId) => buildVisitorDays(db, siteId, nowMs, signal), signal);
}

/** Whose visitors rangeVisitorsCtes counts: all visits, and each value of one attribute. */
export interface VisitorScope {
  attribute?: string;
  all: boolean;
}

/**
 * CTEs ending in `rv (attribute, value_key, visitors)`: the distinct
 * visitors, without bots, of the slices of site `site` (SQL) in [startMs,
 * endMs) (15-minute marks), as the slices would count them, of all visits
 * (attribute '*', with `scope.all`) and per value of `scope.attribute`
 * (only values with visitors have a row): the whole UTC days in the range
 * that are current from the visitors by previous day, everything else from
 * the slices.
 */
export function rangeVisitorsCtes(
  site: string,
  startMs: number,
  endMs: number,
  params: Params,
  scope: VisitorScope,
): string {
  let first = Math.ceil(startMs / DAY_MS) * DAY_MS;
  let end = Math.floor(endMs / DAY_MS) * DAY_MS;
  // Less than a whole UTC day: everything from the slices.
  if (first >= end) first = end = startMs;
  const at = (ms: number) => `${params.add(iso(ms))}::timestamptz`;
  const [from, to, p, pEnd] = [at(startMs), at(endMs), at(first), at(end)];
  const attrs = scope.attribute ? [scope.attribute] : [];
  const wanted = [...attrs, ...(scope.all ? ["*"] : [])].map((a) => `'${a}'`).join(", ");
  const columns = attrs.map((a) => `, s.${a}`).join("");
  // A visitor of the rest has a day of a value in [p, q) when one of their slices there has it.
  const sameValue = scope.attribute
    ? `and (e.attribute = '*' or ${valueKey(`d.${scope.attribute}`)} = e.value_key)`
    : "";
  // [p, q): the whole days from p on that are current, up to the first that is not. Days before
  // the site's first build row hold no data when that row is current: it was built only when no
  // earlier day had data or changes, and none has changed since.
  return `rv_first as (
      select min(day) as day from ingest.visitor_attribute_builds where site_id = ${site}),
    rv_current as (${currentDays(site)}),
    rv_span as (
      select g as day from generate_series(${p}, ${pEnd} - interval '24 hours',
                                           interval '24 hours') g),
    rv_q as (
      select coalesce(min(s.day), ${pEnd}) as q from rv_span s, rv_first f
       where (case when f.day is not null and s.day < f.day then f.day else s.day end)
             not in (select day from rv_current)),
    rv_whole as (
      select r.attribute, r.value_key, sum(r.visitors) as n
        from ingest.visitor_attribute_returns r
       where r.site_id = ${site} and r.attribute in (${wanted}) and r.day >= ${p}
         and r.day < (select q from rv_q) and r.since < ${p}
       group by r.attribute, r.value_key),
    rv_rest_slices as (
      select s.visitor_key${columns} from ingest.visit_slices s
       where s.site_id = ${site} and not s.bot and s.bucket >= ${from} and s.bucket < ${p}
      union all
      select s.visitor_key${columns} from ingest.visit_slices s
       where s.site_id = ${site} and not s.bot and s.bucket >= (select q from rv_q)
         and s.bucket < ${to}),
    rv_rest as (
      select distinct k.attribute, k.value_key, r.visitor_key
        from rv_rest_slices r ${attributeKeys("r", attrs, scope.all)}),
    rv_added as (
      -- A probe of the visitor's slices in [p, q) per visitor of the rest (a few thousand),
      -- through the index of slices by visitor; never a join with every slice of the range.
      select e.attribute, e.value_key, count(*) as n from rv_rest e
       where (select 1 from ingest.visit_slices d
               where d.site_id = ${site} and d.visitor_key = e.visitor_key
                 and d.bucket >= ${p} and d.bucket < (select q from rv_q) and not d.bot
                 ${sameValue} limit 1) is null
       group by e.attribute, e.value_key),
    rv as (
      select coalesce(w.attribute, a.attribute) as attribute,
             coalesce(w.value_key, a.value_key) as value_key,
             coalesce(w.n, 0) + coalesce(a.n, 0) as visitors
        from rv_whole w full join rv_added a
          on a.attribute = w.attribute and a.value_key = w.value_key)`;
}
