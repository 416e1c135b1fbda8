/**
 * ingest.visits, one row per visit, kept by the writer in the same
 * statement as the rows it inserts: the visit's first and last time, its
 * counts, its visitor, its attributes (dimensions.ts: from its first page
 * view by time, then storage order, else from its first row) and its exit
 * page (its last page view). A visit is a session ('s' and its id) or a row
 * without one ('r' and its seq). A visit whose rows have more than one
 * visitor key, or both bot and human rows, is marked mixed: the reports
 * work its numbers out from its rows (its visitor key is then the least of
 * its keys, and it counts as bots only if all its rows are, so however its
 * rows arrive, it is kept as its rows say).
 *
 * Every statement that changes a visit counts one change on each UTC day
 * from its first to its last time (ingest.stat_day_changes), so the rollups
 * built over those days are known to be stale (rollups.ts), and raises the
 * site's longest visit (ingest.visit_spans), which bounds where visits
 * crossing an instant can begin.
 */
import type { Param, Queryable } from "../../lib/db/mod.ts";
import { FIRST_ROW_ATTRIBUTES, KIND, pageOf, visitKeyOf, visitorKeyOf } from "./dimensions.ts";

type Kind = keyof typeof KIND;

/** The UTC day of an instant column. */
export const utcDay = (at: string) => `date_bin('1 day', ${at}, timestamptz 'epoch')`;

/**
 * The select list that turns a stored row (alias x) of a kind into the
 * relation the upkeep reads: site_id, kind, at, seq, visit_key,
 * visitor_key, bot, page and the first-row attributes.
 */
export function rowColumns(kind: Kind): string {
  const view = kind === "pageview";
  return [
    "x.site_id",
    `${KIND[kind]}::smallint as kind`,
    "x.received_at as at",
    "x.seq",
    `${visitKeyOf("x")} as visit_key`,
    `${visitorKeyOf("x")} as visitor_key`,
    view ? "x.bot" : kind === "event" ? "coalesce(x.bot, false) as bot" : "false as bot",
    kind === "lead" ? "null::text as page" : `${pageOf("x")} as page`,
    ...FIRST_ROW_ATTRIBUTES.map((a) =>
      `${(view ? a.fromPageView : a.fromOtherRow) ?? "null::text"} as ${a.column}`
    ),
  ].join(", ");
}

const ROW_TABLE: Record<Kind, string> = {
  pageview: "ingest.page_views",
  event: "ingest.events",
  lead: "ingest.leads",
};

/** The stored rows of every kind under a condition on alias x, as the upkeep reads them. */
export function storedRows(where: string, kinds: Kind[] = ["pageview", "event", "lead"]): string {
  return kinds.map((k) => `select ${rowColumns(k)} from ${ROW_TABLE[k]} x where ${where}`)
    .join(" union all ");
}

const FIRST = [
  "first_rank",
  "first_row_at",
  "first_seq",
  ...FIRST_ROW_ATTRIBUTES.map((a) => a.column),
];
const LAST = ["last_view_at", "last_view_seq", "exit_page"];
const COLUMNS = [
  "site_id",
  "visit_key",
  "visitor_key",
  "first_at",
  "last_at",
  "bot",
  "mixed",
  "pageviews",
  "events",
  "leads",
  ...FIRST,
  ...LAST,
];

/**
 * The CTEs (after a CTE `d` of rows as rowColumns gives them) that add d's
 * rows to their visits, answering the touched visits as `touched`
 * (site_id, first_at, last_at). Visits are upserted in key order, so
 * concurrent writers lock alike. The earlier first row wins the attributes
 * (a page view before any other row), the later last page view the exit.
 */
export function visitUpkeep(): string {
  const earlier =
    "(excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq)";
  const later = `excluded.last_view_at is not null and (v.last_view_at is null or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at, v.last_view_seq))`;
  // The last page view's column, in the same pass as the counts: a join to a
  // relation of last views is planned as a nested loop (the planner expects
  // one row of a CTE), which costs the square of the rows of the statement.
  const lastView = (column: string) =>
    `(array_agg(${column} order by at desc, seq desc) filter (where kind = ${KIND.pageview}))[1]`;
  const keep = (columns: string[], when: string) =>
    columns.map((c) => `${c} = case when ${when} then excluded.${c} else v.${c} end`);
  return `visit_counts as (
      select site_id, visit_key, min(at) as first_at, max(at) as last_at,
             min(visitor_key) as visitor_key, bool_and(bot) as bot,
             min(visitor_key) <> max(visitor_key) or bool_or(bot) <> bool_and(bot) as mixed,
             (count(*) filter (where kind = ${KIND.pageview}))::int as pageviews,
             (count(*) filter (where kind = ${KIND.event}))::int as events,
             (count(*) filter (where kind = ${KIND.lead}))::int as leads,
             ${lastView("at")} as last_view_at, ${lastView("seq")} as last_view_seq,
             ${lastView("page")} as exit_page
        from d group by site_id, visit_key),
    visit_first as (
      select distinct on (site_id, visit_key) site_id, visit_key,
             kind <> ${KIND.pageview} as first_rank, at as first_row_at, seq as first_seq,
             ${FIRST_ROW_ATTRIBUTES.map((a) => a.column).join(", ")}
        from d order by site_id, visit_key, kind <> ${KIND.pageview}, at, seq),
    touched as (
      insert into ingest.visits as v (${COLUMNS.join(", ")})
      select ${COLUMNS.join(", ")}
        from visit_counts join visit_first using (site_id, visit_key)
       order by site_id, visit_key
      on conflict (site_id, visit_key) do update
        set first_at = least(v.first_at, excluded.first_at),
            last_at = greatest(v.last_at, excluded.last_at),
            mixed = v.mixed or excluded.mixed or v.visitor_key <> excluded.visitor_key
                    or v.bot <> excluded.bot,
            visitor_key = least(v.visitor_key, excluded.visitor_key),
            bot = v.bot and excluded.bot,
            pageviews = v.pageviews + excluded.pageviews,
            events = v.events + excluded.events,
            leads = v.leads + excluded.leads,
            ${[...keep(FIRST, earlier), ...keep(LAST, later)].join(",\n            ")}
      returning site_id, first_at, last_at)`;
}

/**
 * What a statement's upkeep changed, as one JSON text (the `changes` column):
 * the UTC days of every visit it touched, from its first to its last time,
 * and the longest of those visits per site in microseconds.
 */
const CHANGES = `json_build_object(
    'days', (select json_agg(json_build_array(site_id, day)) from (
       select distinct site_id, (extract(epoch from d) * 1000)::bigint as day
         from touched t cross join generate_series(${utcDay("t.first_at")}, ${
  utcDay("t.last_at")
}, interval '1 day') d) days),
    'spans', (select json_agg(json_build_array(site_id, us)) from (
       select site_id, (extract(epoch from max(last_at - first_at)) * 1000000)::bigint as us
         from touched group by site_id) s)
  )::text as changes`;

/** The changes of one transaction's statements, recorded at its end (recordChanges). */
export class VisitChanges {
  readonly days = new Set<string>();
  readonly spans = new Map<string, number>();

  /** Takes the `changes` column off the rows of a statement's answer, keeping what it says. */
  take<T extends { changes?: string | null }>(rows: T[]): T[] {
    const listed = rows[0]?.changes;
    if (listed) {
      const changes = JSON.parse(listed) as {
        days: [string, number][] | null;
        spans: [string, number][] | null;
      };
      for (const day of changes.days ?? []) this.days.add(JSON.stringify(day));
      for (const [site, us] of changes.spans ?? []) {
        this.spans.set(site, Math.max(us, this.spans.get(site) ?? 0));
      }
    }
    for (const r of rows) delete r.changes;
    return rows;
  }
}

/** What an insert statement does besides inserting and keeping the visits. */
export interface StatementParts {
  /** CTEs before the insert, which it may read (the event ids it won, say). */
  before?: readonly string[];
  /** CTEs after it, which may read `ins` (the inserted rows). */
  after?: readonly string[];
  /** What the statement answers (a select list over `ins`, or one row); the changes beside it. */
  answer?: string;
  /** The relation `answer` reads: `ins` by default. */
  from?: string;
}

/**
 * An insert statement (inserting rows of `kind`) followed by the upkeep of
 * their visits, answering `answer` and the changes (VisitChanges.take).
 * Without upkeep, only the insert and its parts.
 */
export function insertWithUpkeep(
  kind: Kind,
  insert: string,
  upkeep: boolean,
  parts: StatementParts = {},
): string {
  const before = (parts.before ?? []).map((cte) => `${cte}, `).join("");
  const after = (parts.after ?? []).map((cte) => `, ${cte}`).join("");
  const answer = parts.answer ?? "1 as one";
  const from = parts.from ?? "(select 1) as one";
  if (!upkeep) {
    if (!before && !after && !parts.answer) return insert;
    return `with ${before}ins as (${insert} returning *)${after} select ${answer} from ${from}`;
  }
  return `with ${before}ins as (${insert} returning *),
    d as (select ${rowColumns(kind)} from ins x),
    ${visitUpkeep()}${after}
    select ${answer}, ${CHANGES} from ${from}`;
}

/** Adds one change to each UTC day of `days` (a select of site_id, day as epoch ms), in key order. */
const countChanges = (days: string) =>
  `insert into ingest.stat_day_changes as c (site_id, day, changes)
     select site_id, to_timestamp(day / 1000.0), 1 from (${days}) d order by 1, 2
     on conflict (site_id, day) do update set changes = c.changes + 1`;

/**
 * The end of a writer's transaction, in one statement: one change on each
 * UTC day its visits cover (rollups over them are stale from its commit
 * on), and a site's longest visit where one grew. Last in the transaction,
 * so the hot rows of today's changes are locked only until the commit. The
 * longest visit is raised by a plain update that locks nothing unless it
 * grows, and inserted only for a site without one.
 */
export async function recordChanges(
  tx: Queryable,
  changes: VisitChanges,
  options: { last?: boolean } = {},
): Promise<void> {
  if (changes.days.size === 0 && changes.spans.size === 0) return;
  await tx.query(
    `with counted as (${
      countChanges(
        `select r->>0 as site_id, (r->>1)::bigint as day from json_array_elements($1::json) r`,
      )
    } returning 1),
     s as (select r->>0 as site_id, (r->>1)::bigint * interval '1 microsecond' as longest
             from json_array_elements($2::json) r),
     raised as (update ingest.visit_spans v set longest = s.longest from s
                 where v.site_id = s.site_id and v.longest < s.longest returning 1),
     added as (
       insert into ingest.visit_spans as v select * from s
        where not exists (select 1 from ingest.visit_spans w where w.site_id = s.site_id)
       on conflict (site_id) do update set longest = greatest(v.longest, excluded.longest)
       returning 1)
     select (select count(*) from counted) as counted, (select count(*) from raised) as raised,
            (select count(*) from added) as added`,
    [`[${[...changes.days].join(",")}]`, JSON.stringify([...changes.spans])],
    { last: options.last },
  );
}

/**
 * Recomputes the visits listed by `affectedSql` (a select of site_id,
 * visit_key, first_at, last_at: where each visit's rows can be) from the
 * stored rows: they are deleted and written again from the rows within
 * those bounds; visits without rows left disappear. One change is counted
 * on each of their UTC days.
 */
export async function recomputeVisits(
  tx: Queryable,
  affectedSql: string,
  params: Param[],
): Promise<void> {
  await tx.exec(`drop table if exists pg_temp.recompute_visits;
    create temp table recompute_visits
      (site_id text, visit_key text, first_at timestamptz, last_at timestamptz)`);
  await tx.query(`insert into pg_temp.recompute_visits ${affectedSql}`, params);
  await tx.exec(
    `delete from ingest.visits v using pg_temp.recompute_visits k
      where v.site_id = k.site_id and v.visit_key = k.visit_key`,
  );
  const within = `exists (select 1 from pg_temp.recompute_visits k
      where x.site_id = k.site_id and x.received_at >= k.first_at and x.received_at <= k.last_at
        and ${visitKeyOf("x")} = k.visit_key)`;
  await tx.exec(`with d as (${storedRows(within)}), ${visitUpkeep()} select 1`);
  await tx.exec(
    countChanges(`select distinct site_id, (extract(epoch from d) * 1000)::bigint as day
       from pg_temp.recompute_visits v
       cross join generate_series(${utcDay("v.first_at")}, ${utcDay("v.last_at")},
                                  interval '1 day') d`),
  );
  await tx.exec("drop table pg_temp.recompute_visits");
}

/**
 * After retention deleted page views and events before `cutoff` (leads
 * stay): every visit that began before it is recomputed from its rows left
 * (its attributes may now come from a later page view; a visit with no row
 * left disappears).
 */
export async function afterRetention(tx: Queryable, cutoff: string): Promise<void> {
  await recomputeVisits(
    tx,
    `select site_id, visit_key, first_at, last_at from ingest.visits
      where first_at < $1::text::timestamptz`,
    [cutoff],
  );
}

/**
 * Before a visitor's rows are deleted: the visits they belong to are noted
 * (with their bounds), and the visitor's number goes; after, recomputeErased
 * puts those visits right from the rows left (other visitors' rows of the
 * same sessions).
 */
export async function beforeErase(
  tx: Queryable,
  siteId: string,
  visitorId: string,
  withLeads: boolean,
): Promise<void> {
  const own = "x.site_id = $1 and x.visitor_id = $2";
  const kinds: Kind[] = withLeads ? ["pageview", "event", "lead"] : ["pageview", "event"];
  await tx.exec(`drop table if exists pg_temp.erased_visits;
    create temp table erased_visits (site_id text, visit_key text)`);
  await tx.query(
    `insert into pg_temp.erased_visits
       select distinct site_id, visit_key from (${storedRows(own, kinds)}) d`,
    [siteId, visitorId],
  );
  await tx.query(
    "delete from ingest.visitor_numbers where site_id = $1 and visitor_key = 'v' || $2",
    [siteId, visitorId],
  );
}

export async function recomputeErased(tx: Queryable): Promise<void> {
  await recomputeVisits(
    tx,
    `select v.site_id, v.visit_key, v.first_at, v.last_at
       from ingest.visits v join pg_temp.erased_visits e using (site_id, visit_key)`,
    [],
  );
  await tx.exec("drop table pg_temp.erased_visits");
}

/** What a rebuild found. */
export interface RebuildChange {
  table: string;
  added: number;
  removed: number;
  changed: number;
}

/**
 * Recomputes a site's visits from its stored rows and writes only the
 * differences; answers how many were added, removed and changed. Every day
 * of the site counts a change, so its rollups are built again. Writers of
 * the site's rows wait while it runs (the row tables are locked in share
 * mode), so no write falls between the recount and the fix.
 */
export async function rebuildSite(tx: Queryable, siteId: string): Promise<RebuildChange[]> {
  await tx.exec("lock table ingest.page_views, ingest.events, ingest.leads in share mode");
  await tx.exec(`drop table if exists pg_temp.rebuilt_visits;
    create temp table rebuilt_visits (like ingest.visits including all)`);
  const upkeep = visitUpkeep().replace("insert into ingest.visits", "insert into rebuilt_visits");
  await tx.query(`with d as (${storedRows("x.site_id = $1")}), ${upkeep} select 1`, [siteId]);
  const values = COLUMNS.filter((c) => c !== "site_id" && c !== "visit_key");
  const same = `(${values.map((c) => `r.${c}`).join(", ")}) is not distinct from (${
    values.map((c) => `t.${c}`).join(", ")
  })`;
  const on = "r.visit_key = t.visit_key";
  const [row] = await tx.query<{ added: number; removed: number; changed: number }>(
    `select count(*) filter (where r.visit_key is null)::int as added,
            count(*) filter (where t.visit_key is null)::int as removed,
            count(*) filter (where r.visit_key is not null and t.visit_key is not null
                               and not ${same})::int as changed
       from (select * from ingest.visits where site_id = $1) r
       full join pg_temp.rebuilt_visits t on ${on}`,
    [siteId],
  );
  // Every day of the site, as it was and as it is rebuilt: its rollups are built again.
  await tx.query(
    countChanges(`select site_id, (extract(epoch from d) * 1000)::bigint as day
       from (select $1::text as site_id, min(first_at) as f, max(last_at) as l from (
               select first_at, last_at from ingest.visits where site_id = $1
               union all select first_at, last_at from pg_temp.rebuilt_visits) b) v
       cross join generate_series(${utcDay("v.f")}, ${utcDay("v.l")}, interval '1 day') d
      where v.f is not null`),
    [siteId],
  );
  await tx.query(
    `delete from ingest.visits r where r.site_id = $1
        and not exists (select 1 from pg_temp.rebuilt_visits t where ${on} and ${same})`,
    [siteId],
  );
  await tx.exec(
    `insert into ingest.visits select t.* from pg_temp.rebuilt_visits t
      where not exists (select 1 from ingest.visits r where r.site_id = t.site_id and ${on})`,
  );
  await tx.query(
    `insert into ingest.visit_spans as v
       select site_id, max(last_at - first_at) from ingest.visits where site_id = $1
        group by site_id
     on conflict (site_id) do update set longest = greatest(v.longest, excluded.longest)`,
    [siteId],
  );
  await tx.exec("drop table pg_temp.rebuilt_visits");
  return [{ table: "ingest.visits", ...row }];
}
