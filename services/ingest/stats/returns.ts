/**
 * Distinct visitors of a long range without reading its slices: each
 * visitor's UTC days with slices that are not bots (ingest.visitor_channel_days),
 * and per UTC day how many of its visitors had their previous such day when
 * (ingest.visitor_channel_returns: day, since, visitors; since '-infinity' for
 * none). The visitors of whole days [P, Q) are then
 *
 *   sum(visitors) over days d in [P, Q) with since < P
 *
 * (a visitor counts on the first of their days in the range, the one whose
 * previous day lies before it), a few hundred rows a year instead of the
 * distinct count over millions of slices that took seconds at ten million
 * page views. The range's parts outside whole built days (its partial first
 * and last UTC days, and days not built yet) are read from the slices, and
 * their visitors counted when they have no day in [P, Q). Both tables are
 * kept for all channels (channel_key '*') and per channel (channelKey), so a
 * channel's visitors are counted the same way from its own days.
 *
 * Built in the background (buildVisitorDays) for UTC days that have ended,
 * in ascending order: a day's previous days depend on every earlier day, so
 * each day's build row (ingest.visitor_channel_builds) keeps the changes counted
 * on the site's UTC days up to and including it (ingest.stat_day_changes,
 * counted by every path that changes slices, in its own transaction) when it
 * was built. A day is current while that number is unchanged; a change on
 * any day makes it and every later day stale, and the builder builds them
 * again from there. A day is built only while the day before it is current,
 * checked in the statement that builds it, so a current day always rests on
 * current days. Reads stay exact whatever the builder has done. The days are
 * UTC days so that nothing depends on the site's zone: a zone changes only
 * how much of a range's ends is read from the slices.
 */
import type { Database } from "../../lib/db/mod.ts";
import { channelKey, iso, type Params } from "./plan.ts";
import { underBuilderLock } from "./builder_lock.ts";

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
       from (select day, changes_through from ingest.visitor_channel_builds
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
 * Builds the visitor days of a site that are missing or stale, for UTC days
 * that have ended by `nowMs`, oldest first, a month of days per transaction
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
  return underBuilderLock(db, "visitor_days", siteId, async (tx) => {
    for (
      const table of ["visitor_channel_days", "visitor_channel_returns", "visitor_channel_builds"]
    ) {
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
 * One statement building the UTC days [$2, $3) of site $1: their visitor
 * days, their visitors by previous day, and their build rows with the
 * changes counted up to each. Builds nothing unless the day before $2 is
 * current, or no day before $2 has data or changes, as seen by this
 * statement (one snapshot with the slices it reads). Answers the days built.
 */
function buildSql(): string {
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
    vd_channels as (
      select distinct ${channelKey("s.channel")} as channel_key, s.visitor_key,
             date_bin('24 hours', s.bucket, timestamptz 'epoch') as day
        from ingest.visit_slices s
       where s.site_id = $1 and s.bucket >= $2::timestamptz and s.bucket < $3::timestamptz
         and not s.bot and (select ok from ready)),
    vd as (
      select channel_key, visitor_key, day from vd_channels
      union all
      select distinct '*', visitor_key, day from vd_channels),
    kept as (
      insert into ingest.visitor_channel_days (site_id, channel_key, visitor_key, day)
        select $1, channel_key, visitor_key, day from vd returning 1),
    previous as (
      select v.channel_key, v.day, coalesce(
               lag(v.day) over (partition by v.channel_key, v.visitor_key order by v.day),
               (select max(d.day) from ingest.visitor_channel_days d
                 where d.site_id = $1 and d.channel_key = v.channel_key
                   and d.visitor_key = v.visitor_key and d.day < $2::timestamptz),
               timestamptz '-infinity') as since
        from vd v),
    returns as (
      insert into ingest.visitor_channel_returns (site_id, channel_key, day, since, visitors)
        select $1, channel_key, day, since, count(*) from previous
         group by channel_key, day, since returning 1),
    marked as (
      insert into ingest.visitor_channel_builds (site_id, day, changes_through)
        select $1, d.day, ${changesThrough("$1", "d.day")} from days d returning 1)
    -- kept and returns run whether read or not, as every data-modifying CTE does.
    select (select count(*) from marked)::int as days`;
}

/** Builds the visitor days of every site with data. */
export async function buildAllVisitorDays(
  db: Database,
  nowMs: number,
  signal?: AbortSignal,
): Promise<VisitorDaysBuild> {
  const sites = await db.query<{ site_id: string }>(
    `select site_id from ingest.stat_day_changes
     union select site_id from ingest.stat_counter_days order by 1`,
  );
  let built = 0;
  for (const site of sites) {
    if (signal?.aborted) break;
    built += (await buildVisitorDays(db, site.site_id, nowMs, signal)).built;
  }
  return { built };
}

/**
 * CTEs ending in `rv (channel_key, visitors)`: the distinct visitors,
 * without bots, of the slices of site `site` (SQL) in [startMs, endMs)
 * (15-minute marks), as the slices would count them, of all channels
 * (channel_key '*', with `scope.all`) and per channel (with
 * `scope.channels`; only channels with visitors have a row): the whole UTC
 * days in the range that are current from the visitor days, everything else
 * from the slices.
 */
export function rangeVisitorsCtes(
  site: string,
  startMs: number,
  endMs: number,
  params: Params,
  scope: { channels: boolean; all: boolean },
): string {
  let first = Math.ceil(startMs / DAY_MS) * DAY_MS;
  let end = Math.floor(endMs / DAY_MS) * DAY_MS;
  // Less than a whole UTC day: everything from the slices.
  if (first >= end) first = end = startMs;
  const at = (ms: number) => `${params.add(iso(ms))}::timestamptz`;
  const [from, to, p, pEnd] = [at(startMs), at(endMs), at(first), at(end)];
  // The keys a slice of the rest counts under: '*' (all channels), its own channel.
  const wanted = [
    ...(scope.all ? ["('*')"] : []),
    ...(scope.channels ? [`(${channelKey("r.channel")})`] : []),
  ];
  const keys = scope.all && scope.channels ? "true" : `r.channel_key ${scope.all ? "=" : "<>"} '*'`;
  // [p, q): the whole days from p on that are current, up to the first that is not. Days before
  // the site's first build row hold no data when that row is current: it was built only when no
  // earlier day had data or changes, and none has changed since.
  return `rv_first as (
      select min(day) as day from ingest.visitor_channel_builds where site_id = ${site}),
    rv_current as (${currentDays(site)}),
    rv_span as (
      select g as day from generate_series(${p}, ${pEnd} - interval '24 hours',
                                           interval '24 hours') g),
    rv_q as (
      select coalesce(min(s.day), ${pEnd}) as q from rv_span s, rv_first f
       where (case when f.day is not null and s.day < f.day then f.day else s.day end)
             not in (select day from rv_current)),
    rv_whole as (
      select r.channel_key, sum(r.visitors) as n from ingest.visitor_channel_returns r
       where r.site_id = ${site} and ${keys} and r.day >= ${p} and r.day < (select q from rv_q)
         and r.since < ${p}
       group by r.channel_key),
    rv_rest_slices as (
      select s.visitor_key, s.channel from ingest.visit_slices s
       where s.site_id = ${site} and not s.bot and s.bucket >= ${from} and s.bucket < ${p}
      union all
      select s.visitor_key, s.channel from ingest.visit_slices s
       where s.site_id = ${site} and not s.bot and s.bucket >= (select q from rv_q)
         and s.bucket < ${to}),
    rv_rest as (
      select distinct k.channel_key, r.visitor_key from rv_rest_slices r
       cross join lateral (values ${wanted.join(", ")}) k(channel_key)),
    rv_added as (
      -- A probe of the visitor days per visitor of the rest (a few thousand), never a join
      -- with every visitor day of the range (hundreds of thousands).
      select e.channel_key, count(*) as n from rv_rest e
       where (select 1 from ingest.visitor_channel_days d
               where d.site_id = ${site} and d.channel_key = e.channel_key
                 and d.visitor_key = e.visitor_key
                 and d.day >= ${p} and d.day < (select q from rv_q) limit 1) is null
       group by e.channel_key),
    rv as (
      select coalesce(w.channel_key, a.channel_key) as channel_key,
             coalesce(w.n, 0) + coalesce(a.n, 0) as visitors
        from rv_whole w full join rv_added a on a.channel_key = w.channel_key)`;
}
