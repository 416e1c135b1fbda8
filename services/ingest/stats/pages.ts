/**
 * Page views, events and leads per page (event:page) without reading every
 * row of a long range: per UTC day that has ended, the rows' counts per page,
 * kind, event name, currency and bot flag (ingest.page_day_counts: n, valued,
 * revenue, as the counters keep them per quarter hour). A year of a site's
 * pages was 4.7 s of rows at ten million page views; it is a few thousand
 * counts instead.
 *
 * Built in the background (buildPageDays) for ended UTC days, each with the
 * changes counted on that day when it was built (ingest.page_day_builds;
 * ingest.stat_day_changes, which every path that changes rows counts on each
 * UTC day of the visits it touches, in its own transaction, so on the day of
 * every row it adds or takes away). A day's counts depend on that day's rows
 * alone: it is current while the number is unchanged, and the builder builds
 * any day that is not, in any order. A query reads a whole UTC day of its
 * range from the counts when the day is current, checked in the same
 * statement, and everything else (the parts of its first and last UTC day in
 * a zone off UTC, days not built or stale) from the rows, so its answer never
 * depends on what the builder has done.
 */
import type { Database } from "../../lib/db/mod.ts";
import { buildEverySite, underBuilderLock } from "./builder_lock.ts";
import { iso, KIND, type Params, rowPage } from "./plan.ts";
import { COUNTED, VALUED } from "./derived.ts";
import type { Span } from "./day_runs.ts";

const DAY_MS = 86_400_000;
/** Days built in one statement: a month of ten million page views is about a million rows. */
const DAYS_PER_STATEMENT = 31;

/**
 * The stored rows under `where` (a condition on alias x, the same for each
 * table) as kind, at, bot, name, value, currency and page, each as the
 * counters define it: an event's bot flag false when unknown, a lead never a
 * bot and without a page (rowPage).
 */
export function pageRows(where: string): string {
  const page = rowPage("x");
  return `select ${KIND.pageview}::smallint as kind, x.received_at as at, x.bot,
                 null::text as name, null::bigint as value, null::text as currency,
                 ${page} as page
            from ingest.page_views x where ${where}
          union all
          select ${KIND.event}::smallint, x.received_at, coalesce(x.bot, false), x.name, x.value,
                 x.currency, ${page}
            from ingest.events x where ${where}
          union all
          select ${KIND.lead}::smallint, x.received_at, false, null, null, null, null
            from ingest.leads x where ${where}`;
}

/**
 * The rows of site `site` (SQL) over `days` (whole UTC days, each inside one
 * bucket of every time dimension) and `rest` (the other spans of the range),
 * as bucket (an instant in the row's group), kind, name, currency, n,
 * valued, revenue and page, with '' read as none: the days whose counts are
 * current from ingest.page_day_counts, the others and `rest` from the rows.
 * `humans` leaves bots out.
 */
export function pageCountRows(
  site: string,
  days: Span[],
  rest: Span[],
  humans: boolean,
  params: Params,
): string {
  const spans = (list: Span[]) => {
    const bounds = (i: 0 | 1) => params.add(`{${list.map((s) => iso(s[i])).join(",")}}`);
    return `unnest(${bounds(0)}::timestamptz[], ${bounds(1)}::timestamptz[])`;
  };
  const notBot = humans ? " and not bot" : "";
  // Intervals of hours, not days: a day interval follows the session's zone across a DST change.
  const wholeDays = days.length
    ? `select g as day from ${spans(days)} r(lo, hi)
         cross join generate_series(r.lo, r.hi - interval '24 hours', interval '24 hours') g`
    : "select null::timestamptz as day where false";
  return `with pd_days as (${wholeDays}),
    pd_current as (
      select b.day from ingest.page_day_builds b
        join pd_days using (day)
        left join ingest.stat_day_changes c on c.site_id = b.site_id and c.day = b.day
       where b.site_id = ${site} and b.changes = coalesce(c.changes, 0)),
    pd_rest as (
      select lo, hi from ${
    rest.length ? spans(rest) : "(select null::timestamptz, null::timestamptz where false)"
  } r(lo, hi)
      union all
      select day, day + interval '24 hours' from pd_days
       where day not in (select day from pd_current))
    select c.day as bucket, c.kind, nullif(c.name, '') as name,
           nullif(c.currency, '') as currency, c.n, c.valued, c.revenue,
           nullif(c.page, '') as page
      from ingest.page_day_counts c
     where c.site_id = ${site} and c.day in (select day from pd_current)${notBot}
    union all
    select x.at, x.kind, x.name, x.currency, 1, (${VALUED})::int,
           case when ${VALUED} then x.value else 0 end, x.page
      from pd_rest r
      cross join lateral (
        ${pageRows(`x.site_id = ${site} and x.received_at >= r.lo and x.received_at < r.hi`)}) x
     ${humans ? "where not x.bot" : ""}`;
}

/** What one build did. */
export interface PageDaysBuild {
  /** UTC days built. */
  built: number;
}

/**
 * Builds the page counts of a site's ended UTC days (before `nowMs`) that
 * are missing or stale, a month of days per transaction under the site's
 * builder lock; stops between transactions when `signal` is aborted or
 * another builder holds the site.
 */
export async function buildPageDays(
  db: Database,
  siteId: string,
  nowMs: number,
  signal?: AbortSignal,
): Promise<PageDaysBuild> {
  const lastEnd = Math.floor(nowMs / DAY_MS) * DAY_MS;
  // Days with rows (their counters), with changes, or built before (retention may have
  // emptied them since).
  const stale = await db.query<{ day: string }>(
    `select (extract(epoch from k.day) * 1000)::bigint::text as day
       from (select day from ingest.stat_counter_days where site_id = $1
             union select day from ingest.stat_day_changes where site_id = $1
             union select day from ingest.page_day_builds where site_id = $1) k
       left join ingest.page_day_builds b on b.site_id = $1 and b.day = k.day
       left join ingest.stat_day_changes c on c.site_id = $1 and c.day = k.day
      where k.day < $2::timestamptz
        and (b.day is null or b.changes <> coalesce(c.changes, 0))
      order by k.day`,
    [siteId, iso(lastEnd)],
  );
  let built = 0;
  for (let i = 0; i < stale.length; i += DAYS_PER_STATEMENT) {
    if (signal?.aborted) break;
    const days = stale.slice(i, i + DAYS_PER_STATEMENT).map((d) => iso(Number(d.day)));
    const done = await buildDays(db, siteId, days);
    if (done === undefined) break;
    built += done;
  }
  return { built };
}

/**
 * Builds the listed UTC days (ISO instants) of a site in one transaction
 * under its builder lock: their old counts deleted, then, in one statement
 * (one snapshot), the rows' counts and each day's changes counted so far.
 * Answers the days built, undefined when another builder holds the site.
 */
export function buildDays(
  db: Database,
  siteId: string,
  days: string[],
): Promise<number | undefined> {
  return underBuilderLock(db, "page_day_counts", siteId, async (tx) => {
    const list = `{${days.join(",")}}`;
    for (const table of ["page_day_counts", "page_day_builds"]) {
      await tx.query(
        `delete from ingest.${table} where site_id = $1 and day = any($2::timestamptz[])`,
        [siteId, list],
      );
    }
    const [row] = await tx.query<{ days: number }>(
      `with days as (select unnest($2::timestamptz[]) as day),
       counted as (
         insert into ingest.page_day_counts
           (site_id, day, bot, kind, name, currency, page, n, valued, revenue)
         select $1, d.day, x.bot, x.kind, coalesce(x.name, ''), coalesce(x.currency, ''),
                coalesce(x.page, ''), ${COUNTED}
           from days d
           cross join lateral (${
        pageRows(
          "x.site_id = $1 and x.received_at >= d.day " +
            "and x.received_at < d.day + interval '24 hours'",
        )
      }) x
          group by 2, 3, 4, 5, 6, 7
         returning 1),
       marked as (
         insert into ingest.page_day_builds (site_id, day, changes)
         select $1, d.day, coalesce(c.changes, 0) from days d
           left join ingest.stat_day_changes c on c.site_id = $1 and c.day = d.day
         returning 1)
       -- counted runs whether read or not, as every data-modifying CTE does.
       select (select count(*) from marked)::int as days`,
      [siteId, list],
    );
    return row.days;
  });
}

/** Builds the page counts of every site with data. */
export function buildAllPageDays(
  db: Database,
  nowMs: number,
  signal?: AbortSignal,
): Promise<PageDaysBuild> {
  return buildEverySite(db, (siteId) => buildPageDays(db, siteId, nowMs, signal), signal);
}
