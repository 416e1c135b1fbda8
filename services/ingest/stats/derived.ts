/**
 * The derived tables of the reports and how they are kept: the writer adds
 * each group's rows to them in the same statement as it inserts the rows;
 * visitor deletion and retention recompute what they touch from the rows
 * left; the rebuild recomputes a site's from its rows and says what changed.
 * One description of how a stored row maps to them (ROW_COLUMNS and
 * upkeepSql), used by all of these, so they cannot disagree.
 *
 * - ingest.stat_counters: per site, 15-minute UTC bucket, bot flag, kind
 *   (page view, event, lead), event name and currency: rows, rows with a
 *   value and a currency, and the sum of those values.
 * - ingest.stat_counter_days: the same counters summed per UTC day, kept
 *   with them (every path that changes the quarter hours changes their days).
 * - ingest.visit_slices: per site, 15-minute bucket, visit, visitor and bot
 *   flag: the first and last time of the rows there and their counts, and
 *   the visit's attributes (as in ingest.visits; when an earlier row changes
 *   them, the writer updates the visit's other slices: rehomeSlices).
 * - ingest.visits: per visit of a session, its first and last time (bots
 *   included) and the attributes the reference engine (reference.ts) gives
 *   it: those of its first stored page view (by time, then storage order),
 *   else of its first row.
 *
 * A visit is a session id ('s' || id); a row without one is a visit of its
 * own ('r' || seq), which lives in its one slice alone: its first and last
 * time are the row's, its attributes the row's, and no later row can join
 * it, so a visits row would say nothing the slice does not (and cost every
 * server event an upsert: issue 12's upkeep). A visitor is the visitor id,
 * else the visit.
 */
import type { Param, Queryable } from "../../lib/db/mod.ts";
import { KIND } from "./plan.ts";

/** Whether a visit (its visit_key column) is a session's, which has a row in ingest.visits. */
const SESSION_VISIT = "visit_key like 's%'";

/** The length of the slices' and counters' buckets. */
export const QUARTER_HOUR_MS = 15 * 60_000;
/** The 15-minute UTC bucket of an instant column. */
export const bucket15 = (at: string) => `date_bin('15 minutes', ${at}, timestamptz 'epoch')`;
/** The UTC day of an instant column. */
export const utcDay = (at: string) => `date_bin('1 day', ${at}, timestamptz 'epoch')`;

const ATTRIBUTION = [
  "channel",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
  "ad_link",
] as const;
/** The attribute columns of ingest.visits, in table order. */
export const VISIT_ATTRIBUTES = [
  ...ATTRIBUTION,
  "entry_page",
  "source",
  "country",
  "device",
  "browser",
  "os",
  "visitor_type",
] as const;

/**
 * The select list that turns a stored row (alias `x`) of each kind into the
 * relation upkeepSql reads: site_id, kind, at, seq, visit_key, visitor_key,
 * bot, name, value, currency and the visit attributes.
 */
function rowColumns(kind: keyof typeof KIND, storedPage = false): string {
  const keys = [
    "x.site_id",
    `${KIND[kind]}::smallint as kind`,
    "x.received_at as at",
    "x.seq",
    "coalesce('s' || x.session_id, 'r' || x.seq) as visit_key",
    "coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key",
  ];
  const attribution = ATTRIBUTION.map((c) => `x.${c}`);
  if (kind === "pageview") {
    return [
      ...keys,
      "x.bot",
      "null::text as name",
      "null::bigint as value",
      "null::text as currency",
      ...attribution,
      // A row just inserted carries its page (the insert worked it out with the same function);
      // stored rows may be older than that column, and migration 4's backfill ran before it.
      storedPage ? "x.page as entry_page" : "ingest.url_path(x.url) as entry_page",
      "coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url)) as source",
      "x.country",
      "x.device",
      "x.browser",
      "x.os",
      "case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end as visitor_type",
    ].join(", ");
  }
  const viewOnly = ["country", "device", "browser", "os", "visitor_type"]
    .map((c) => `null::text as ${c}`);
  const event = kind === "event";
  return [
    ...keys,
    event ? "coalesce(x.bot, false) as bot" : "false as bot",
    event ? "x.name" : "null::text as name",
    event ? "x.value" : "null::bigint as value",
    event ? "x.currency" : "null::text as currency",
    ...attribution,
    "null::text as entry_page",
    "x.utm_source as source",
    ...viewOnly,
  ].join(", ");
}

export const ROW_COLUMNS = {
  pageview: rowColumns("pageview"),
  event: rowColumns("event"),
  lead: rowColumns("lead"),
};

/** ROW_COLUMNS of page views and events the writer has just inserted: their page is stored. */
const INSERTED_ROW_COLUMNS = {
  pageview: rowColumns("pageview", true),
  event: rowColumns("event", true),
};

/** The table of the stored rows of each kind. */
const ROW_TABLE = { pageview: "ingest.page_views", event: "ingest.events", lead: "ingest.leads" };

/** The stored rows of a kind as the relation upkeepSql reads, under a condition on alias x. */
export function storedRows(kind: keyof typeof KIND, where: string): string {
  return `select ${ROW_COLUMNS[kind]} from ${ROW_TABLE[kind]} x where ${where}`;
}

export interface Targets {
  counters?: string;
  /** Kept with counters: every statement that adds to one adds to the other. */
  counterDays?: string;
  slices?: string;
  visits?: string;
}

export const TABLES = {
  counters: "ingest.stat_counters",
  counterDays: "ingest.stat_counter_days",
  slices: "ingest.visit_slices",
  visits: "ingest.visits",
} as const;

const SLICE_KEY = ["site_id", "bucket", "visit_key", "visitor_key", "bot"];
const COUNTER_KEY = ["site_id", "bucket", "bot", "kind", "name", "currency"];
const DAY_KEY = ["site_id", "day", "bot", "kind", "name", "currency"];

/**
 * Adds sums (a select of `key`, n, valued, revenue) to the counters `table`,
 * in key order so concurrent writers lock alike.
 */
const addSums = (table: string, key: string[], sums: string) =>
  `insert into ${table} as c (${key.join(", ")}, n, valued, revenue)
      select * from (${sums}) s order by ${key.map((_, i) => i + 1).join(", ")}
      on conflict (${key.join(", ")}) do update
        set n = c.n + excluded.n, valued = c.valued + excluded.valued,
            revenue = c.revenue + excluded.revenue`;

/** Adds counter deltas (a select of COUNTER_KEY, n, valued, revenue) to the quarter hours. */
const addToQuarters = (table: string, deltas: string) => addSums(table, COUNTER_KEY, deltas);

/** Adds counter deltas (a select of COUNTER_KEY, n, valued, revenue) summed per UTC day. */
const addToDays = (table: string, deltas: string) =>
  addSums(
    table,
    DAY_KEY,
    `select site_id, ${utcDay("bucket")} as day, bot, kind, name, currency, sum(n) as n,
            sum(valued) as valued, sum(revenue) as revenue
       from (${deltas}) q group by 1, 2, 3, 4, 5, 6`,
  );

/** Whether a row (its value and currency columns) brings revenue, and counts as valued. */
export const VALUED = "value is not null and currency is not null";

/** What rows add to a counter, as aggregates: n, valued, revenue. */
export const COUNTED = `count(*) as n,
         count(*) filter (where ${VALUED}) as valued,
         coalesce(sum(value) filter (where ${VALUED}), 0)
           as revenue`;

/** What the rows of `d` (ROW_COLUMNS) add to each counter: a select of COUNTER_KEY, n, valued, revenue. */
const COUNTER_DELTAS = `select site_id, ${
  bucket15("at")
} as bucket, bot, kind, coalesce(name, '') as name,
         coalesce(currency, '') as currency, ${COUNTED}
    from d group by 1, 2, 3, 4, 5, 6`;

/** A counter's key and what rows add to it. */
export type CounterDelta = {
  site_id: string;
  bucket: string;
  bot: boolean;
  kind: number;
  name: string;
  currency: string;
  n: number;
  valued: number;
  /** Minor units, as text (a sum can pass 2^53). */
  revenue: string;
  /** What else the statement changed (UPKEEP_NOTES, takeNotes), before it is taken off. */
  upkeep?: string | null;
};

/**
 * upkeepParts as migration 4 ran it, before slices carried the visit's
 * attributes (migration 6): kept word for word, because a migration's SQL
 * never changes once databases have run it.
 */
function upkeepPartsV4(targets: Targets): string[] {
  const parts: string[] = [];
  if (targets.counters) {
    const t = targets.counters;
    parts.push(`up_counters as (
      insert into ${t} as c (${COUNTER_KEY.join(", ")}, n, valued, revenue)
      ${COUNTER_DELTAS} order by 1, 2, 3, 4, 5, 6
      on conflict (${COUNTER_KEY.join(", ")}) do update
        set n = c.n + excluded.n, valued = c.valued + excluded.valued,
            revenue = c.revenue + excluded.revenue
      returning 1)`);
  }
  if (targets.slices) {
    const t = targets.slices;
    parts.push(`up_slices as (
      insert into ${t} as s (${SLICE_KEY.join(", ")}, first_at, last_at, pageviews, events, leads)
      select site_id, ${bucket15("at")}, visit_key, visitor_key, bot, min(at), max(at),
             count(*) filter (where kind = ${KIND.pageview}),
             count(*) filter (where kind = ${KIND.event}),
             count(*) filter (where kind = ${KIND.lead})
        from d group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (${SLICE_KEY.join(", ")}) do update
        set first_at = least(s.first_at, excluded.first_at),
            last_at = greatest(s.last_at, excluded.last_at),
            pageviews = s.pageviews + excluded.pageviews, events = s.events + excluded.events,
            leads = s.leads + excluded.leads
      returning 1)`);
  }
  if (targets.visits) {
    const t = targets.visits;
    const first = ["first_rank", "first_at", "first_seq", ...VISIT_ATTRIBUTES];
    // The earlier first row (page views before other rows, then time, then storage order) wins.
    const earlier =
      "(excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq)";
    parts.push(`up_visits as (
      insert into ${t} as v (site_id, visit_key, first_seen, last_seen, ${first.join(", ")})
      select distinct on (site_id, visit_key) site_id, visit_key,
             min(at) over w, max(at) over w, kind <> ${KIND.pageview}, at, seq,
             ${VISIT_ATTRIBUTES.join(", ")}
        from d window w as (partition by site_id, visit_key)
       order by site_id, visit_key, kind <> ${KIND.pageview}, at, seq
      on conflict (site_id, visit_key) do update
        set first_seen = least(v.first_seen, excluded.first_seen),
            last_seen = greatest(v.last_seen, excluded.last_seen),
            ${
      first.map((c) => `${c} = case when ${earlier} then excluded.${c} else v.${c} end`).join(
        ",\n            ",
      )
    }
      returning 1)`);
  }
  return parts;
}

/**
 * The CTEs (after a CTE `d` holding rows as ROW_COLUMNS) that add `d` to the
 * target tables, as `name as (...)` parts. Rows are inserted in key order so
 * concurrent writers lock in the same order. Slices need the visits target:
 * each slice of a session's visit carries its visit's attributes as the
 * visit's upsert answers them (the merged visit, not only these rows); a
 * visit without a session is one row, with no visits row, whose one slice
 * is new and takes the row's own attributes (a plain insert, about a fifth
 * less upkeep for a server event than an upsert). A CTE `rehomed` lists the
 * visits that existed and whose first row is now one of `d`'s: their other
 * slices still carry the old attributes, which rehomeSlices puts right.
 */
export function upkeepParts(targets: Targets): string[] {
  const parts: string[] = [];
  if (Boolean(targets.counters) !== Boolean(targets.counterDays)) {
    throw new Error("counters are kept with their days");
  }
  if (targets.counters) {
    parts.push(`up_counters as (${addToQuarters(targets.counters, COUNTER_DELTAS)} returning 1)`);
    parts.push(
      `up_counter_days as (${addToDays(targets.counterDays!, COUNTER_DELTAS)} returning 1)`,
    );
  }
  if (targets.slices && !targets.visits) throw new Error("slices are kept with their visits");
  if (targets.visits) {
    const t = targets.visits;
    const first = ["first_rank", "first_at", "first_seq", ...VISIT_ATTRIBUTES];
    // The earlier first row (page views before other rows, then time, then storage order) wins.
    const earlier =
      "(excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq)";
    // Visits of a session only: a row without one is a visit whose one slice says it all.
    parts.push(`vfirst as (
      select distinct on (site_id, visit_key) site_id, visit_key,
             min(at) over w as first_seen, max(at) over w as last_seen,
             kind <> ${KIND.pageview} as first_rank, at as first_at, seq as first_seq,
             ${VISIT_ATTRIBUTES.join(", ")}
        from d where ${SESSION_VISIT} window w as (partition by site_id, visit_key)
       order by site_id, visit_key, kind <> ${KIND.pageview}, at, seq)`);
    // xmax is not 0 on a row the upsert updated (it existed): a new visit needs no re-homing.
    parts.push(`up_visits as (
      insert into ${t} as v (site_id, visit_key, first_seen, last_seen, ${first.join(", ")})
      select site_id, visit_key, first_seen, last_seen, ${first.join(", ")} from vfirst
      on conflict (site_id, visit_key) do update
        set first_seen = least(v.first_seen, excluded.first_seen),
            last_seen = greatest(v.last_seen, excluded.last_seen),
            ${
      first.map((c) => `${c} = case when ${earlier} then excluded.${c} else v.${c} end`).join(
        ",\n            ",
      )
    }
      returning site_id, visit_key, first_rank, first_at, first_seq, v.xmax::text <> '0' as existed,
                first_seen, last_seen, ${VISIT_ATTRIBUTES.join(", ")})`);
    parts.push(`rehomed as (
      select u.site_id, u.visit_key from up_visits u join vfirst f using (site_id, visit_key)
       where u.existed
         and (u.first_rank, u.first_at, u.first_seq) = (f.first_rank, f.first_at, f.first_seq))`);
    // The first and last time of every visit the statement touched (their UTC days changed):
    // those of a session merged by their upsert, the others their one row's.
    parts.push(`touched as (
      select site_id, first_seen, last_seen from up_visits
      union all
      select site_id, at, at from d where not ${SESSION_VISIT})`);
  }
  if (targets.slices) {
    const t = targets.slices;
    const attrs = VISIT_ATTRIBUTES.join(", ");
    // A slice per visit of a session and bucket of `d`, with its visit's attributes as the
    // visit's upsert answers them.
    const sessionSlices = `select g.*, ${VISIT_ATTRIBUTES.map((c) => `u.${c}`).join(", ")}
        from (select site_id, ${bucket15("at")} as bucket, visit_key, visitor_key, bot,
                     min(at), max(at),
                     count(*) filter (where kind = ${KIND.pageview}),
                     count(*) filter (where kind = ${KIND.event}),
                     count(*) filter (where kind = ${KIND.lead})
                from d where ${SESSION_VISIT}
               group by 1, 2, 3, 4, 5) g
        join up_visits u using (site_id, visit_key)
       order by 1, 2, 3, 4, 5`;
    // A row without a session is a visit of its own (its key holds the row's seq): its slice is
    // the row itself, with the row's attributes; nothing to group or join.
    const rowSlices = `select site_id, ${bucket15("at")}, visit_key, visitor_key, bot, at, at,
             (kind = ${KIND.pageview})::int, (kind = ${KIND.event})::int,
             (kind = ${KIND.lead})::int, ${attrs}
        from d where not ${SESSION_VISIT}
       order by 1, 2, 3, 4, 5`;
    const columns = `${
      SLICE_KEY.join(", ")
    }, first_at, last_at, pageviews, events, leads, ${attrs}`;
    parts.push(`up_slices as (
      insert into ${t} as s (${columns})
      ${sessionSlices}
      on conflict (${SLICE_KEY.join(", ")}) do update
        set first_at = least(s.first_at, excluded.first_at),
            last_at = greatest(s.last_at, excluded.last_at),
            pageviews = s.pageviews + excluded.pageviews, events = s.events + excluded.events,
            leads = s.leads + excluded.leads,
            ${VISIT_ATTRIBUTES.map((c) => `${c} = excluded.${c}`).join(", ")}
      returning 1)`);
    // A visit without a session is one row, written once: its one slice is new.
    parts.push(`new_slices as (insert into ${t} (${columns}) ${rowSlices} returning 1)`);
  }
  return parts;
}

/**
 * What a writer's statement changed besides its rows, kept until the end of
 * its transaction: the visits it re-homed (rehomeSlices), the UTC days whose
 * slices or visits changed (as [site, day ms] JSON, for the period sums'
 * validity: periods.ts) and the longest visit it saw per site, in
 * microseconds (as exact as the stored times).
 */
export class UpkeepNotes {
  readonly rehomed: [string, string][] = [];
  readonly days = new Set<string>();
  readonly spans = new Map<string, number>();
}

/** The UTC days from a visit's first to its last time, as epoch ms, for a visits relation. */
const visitDays = (visits: string) =>
  `select distinct v.site_id, (extract(epoch from d) * 1000)::bigint as day
     from ${visits} v
     cross join generate_series(${utcDay("v.first_seen")}, ${utcDay("v.last_seen")},
                                interval '1 day') d`;

/**
 * A writer statement's notes (UpkeepNotes) as one JSON text, the same on
 * every row it answers: the visits it re-homed, the UTC days of every visit
 * it touched (from its first to its last time: a row anywhere in a visit
 * changes the sums of the period it began in) and the longest of those
 * visits per site.
 */
const UPKEEP_NOTES = `json_build_object(
    'rehomed', (select json_agg(json_build_array(site_id, visit_key)) from rehomed),
    'days', (select json_agg(json_build_array(site_id, day)) from (${visitDays("touched")}) d),
    'spans', (select json_agg(json_build_array(site_id, us)) from (
       select site_id, (extract(epoch from max(last_seen - first_seen)) * 1000000)::bigint as us
         from up_visits group by site_id) s)
  )::text as upkeep`;

/** Moves the notes a writer's statement answered (UPKEEP_NOTES) into `into`, taking the field off the rows. */
export function takeNotes<T extends { upkeep?: string | null }>(rows: T[], into: UpkeepNotes): T[] {
  const listed = rows[0]?.upkeep;
  if (listed) {
    const notes = JSON.parse(listed) as {
      rehomed: [string, string][] | null;
      days: [string, number][] | null;
      spans: [string, number][] | null;
    };
    into.rehomed.push(...notes.rehomed ?? []);
    for (const day of notes.days ?? []) into.days.add(JSON.stringify(day));
    for (const [site, us] of notes.spans ?? []) {
      into.spans.set(site, Math.max(us, into.spans.get(site) ?? 0));
    }
  }
  for (const r of rows) delete r.upkeep;
  return rows;
}

/**
 * Gives every slice of the listed visits (pairs of site id and visit key)
 * its visit's attributes: after a page view earlier than the visit's first
 * one arrived, the slices the statement did not touch still carry the old
 * ones. A statement of its own, after the upkeep: its snapshot sees slices
 * that writers of the same visit committed while the upkeep waited for the
 * visit's row lock (held from the upkeep to the commit, so any later writer
 * of the visit reads the new attributes).
 */
export async function rehomeSlices(tx: Queryable, visits: [string, string][]): Promise<void> {
  if (visits.length === 0) return;
  const cols = VISIT_ATTRIBUTES.join(", ");
  await tx.query(
    `update ingest.visit_slices s set (${cols}) = (${
      VISIT_ATTRIBUTES.map((c) => `v.${c}`).join(", ")
    })
       from ingest.visits v
       join (select distinct r->>0 as site_id, r->>1 as visit_key
               from json_array_elements($1::json) r) k using (site_id, visit_key)
      where s.site_id = v.site_id and s.visit_key = v.visit_key
        and s.bucket >= ${bucket15("v.first_seen")} and s.bucket <= v.last_seen
        and (${VISIT_ATTRIBUTES.map((c) => `s.${c}`).join(", ")}) is distinct from
            (${VISIT_ATTRIBUTES.map((c) => `v.${c}`).join(", ")})`,
    [JSON.stringify(visits)],
  );
}

/** A statement adding the rows of `rowsSql` (a select of ROW_COLUMNS) to the targets. */
export function upkeepSql(rowsSql: string, targets: Targets = TABLES): string {
  return `with d as (${rowsSql}), ${upkeepParts(targets).join(", ")} select 1`;
}

/** Existing rows into the tables migration 4 made, as it did (upkeepPartsV4). */
export const BACKFILL = `with d as (${
  ["pageview", "event", "lead"].map((k) => storedRows(k as keyof typeof KIND, "true")).join(
    " union all ",
  )
}), ${upkeepPartsV4(TABLES).join(", ")} select 1;`;

/**
 * The writer's statement for page views or events: `insert` (inserting rows,
 * without returning) followed by the upkeep of the rows' visit slices and
 * visits, answering the counter deltas of the rows (CounterDelta), which the
 * writer adds with addCounters at the end of its transaction: every writer
 * adds to the same few counters of the current quarter hour, and taking
 * their row locks last keeps concurrent transactions from waiting on each
 * other for their whole length; and its notes (takeNotes): the visits it
 * re-homed (rehomeSlices) and the days it changed (addCounters). Without
 * upkeep, only the insert.
 */
export function insertWithUpkeep(
  kind: "pageview" | "event",
  insert: string,
  upkeep: boolean,
  parts: WriterStatementParts = {},
): string {
  const before = (parts.before ?? []).map((cte) => `${cte}, `).join("");
  const after = (parts.after ?? []).map((cte) => `, ${cte}`).join("");
  if (!upkeep) {
    if (!before && !after && !parts.answer) return insert;
    return `with ${before}ins as (${insert} returning *)${after} select ${
      parts.answer ?? "1 where false"
    }`;
  }
  const rows = `select ${INSERTED_ROW_COLUMNS[kind]} from ins x`;
  // With an answer of its own, one row even when no counter changes.
  const deltas = parts.answer
    ? `(select 1) as one left join (${COUNTER_DELTAS}) as deltas on true`
    : `(${COUNTER_DELTAS}) as deltas`;
  return `with ${before}ins as (${insert} returning *), d as (${rows}), ${
    upkeepParts({ slices: TABLES.slices, visits: TABLES.visits }).join(", ")
  }${after} select ${parts.answer ? `${parts.answer}, ` : ""}site_id, bucket::text as bucket, bot,
           kind::int as kind, name, currency, n::float8 as n, valued::float8 as valued,
           revenue::text as revenue, ${UPKEEP_NOTES}
      from ${deltas}`;
}

/** What a writer's statement does besides its insert and upkeep (insertWithUpkeep). */
export interface WriterStatementParts {
  /** CTEs before the insert, which it may read (the event ids it won, say). */
  before?: readonly string[];
  /** CTEs after it, which may read `ins` (the inserted rows). */
  after?: readonly string[];
  /**
   * One more answer column (an expression), on a row of its own when no
   * counter changes; that row's counter columns are null (counterDeltas drops it).
   */
  answer?: string;
}

/**
 * The counter deltas of a statement's answer, without a row that carries
 * none (a null site: `answer`'s own row; none at all without upkeep).
 */
export const counterDeltas = <T extends { site_id?: string | null }>(rows: T[]) =>
  rows.filter((row) => typeof row.site_id === "string");

/** The leads' statement: insert, then all upkeep at once (leads are few), answering `answer`. */
export function insertLeadsWithUpkeep(insert: string, answer: string, upkeep: boolean): string {
  if (!upkeep) return `${insert} returning ${answer}`;
  const rows = `select ${ROW_COLUMNS.lead} from ins x`;
  return `with ins as (${insert} returning *), d as (${rows}), ${
    upkeepParts(TABLES).join(", ")
  } select ${answer}, ${UPKEEP_NOTES} from ins`;
}

/** Adds one change to each UTC day of `days` (a select of site_id, day as epoch ms), in key order. */
const countChanges = (days: string) =>
  `insert into ingest.stat_day_changes as c (site_id, day, changes)
     select site_id, to_timestamp(day / 1000.0), 1 from (${days}) d order by 1, 2
     on conflict (site_id, day) do update set changes = c.changes + 1`;

/**
 * The end of a writer's transaction, in one statement: adds the counter
 * deltas (summed per key first) to the quarter hours and their days, then
 * records what the transaction changed (takeNotes): one change on each UTC
 * day its visits cover (the period sums over them are stale from its commit
 * on: periods.ts), and a site's longest visit where one grew. Every writer
 * takes the rows in that order (the answer's subqueries run left to right),
 * each table in key order, so writers lock alike. The longest visit is
 * raised by a plain update that locks nothing unless it grows, and inserted
 * only for a site without one.
 */
export async function addCounters(
  tx: Queryable,
  deltas: CounterDelta[],
  notes: UpkeepNotes = new UpkeepNotes(),
  options: { last?: boolean } = {},
): Promise<void> {
  if (deltas.length === 0 && notes.days.size === 0 && notes.spans.size === 0) return;
  const merged = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const k = JSON.stringify([d.site_id, d.bucket, d.bot, d.kind, d.name, d.currency]);
    const m = merged.get(k);
    if (!m) merged.set(k, { ...d });
    else {
      m.n += d.n;
      m.valued += d.valued;
      m.revenue = (BigInt(m.revenue) + BigInt(d.revenue)).toString();
    }
  }
  await tx.query(
    `with r as (
       select site_id, bucket, bot, kind, name, currency, n, valued, revenue
         from json_to_recordset($1::json) as r(site_id text, bucket timestamptz, bot boolean,
              kind smallint, name text, currency text, n bigint, valued bigint, revenue numeric)),
     quarters as (${addToQuarters(TABLES.counters, "select * from r")} returning 1),
     days as (${addToDays(TABLES.counterDays, "select * from r")} returning 1),
     counted as (${
      countChanges(
        `select r->>0 as site_id, (r->>1)::bigint as day from json_array_elements($2::json) r`,
      )
    } returning 1),
     s as (select r->>0 as site_id, (r->>1)::bigint * interval '1 microsecond' as longest
             from json_array_elements($3::json) r),
     raised as (update ingest.visit_spans v set longest = s.longest from s
                 where v.site_id = s.site_id and v.longest < s.longest returning 1),
     added as (
       insert into ingest.visit_spans as v select * from s
        where not exists (select 1 from ingest.visit_spans w where w.site_id = s.site_id)
       on conflict (site_id) do update set longest = greatest(v.longest, excluded.longest)
       returning 1)
     select (select count(*) from quarters), (select count(*) from days),
            (select count(*) from counted), (select count(*) from raised),
            (select count(*) from added)`,
    [
      JSON.stringify([...merged.values()]),
      `[${[...notes.days].join(",")}]`,
      JSON.stringify([...notes.spans]),
    ],
    { last: options.last },
  );
}

/**
 * Recomputes the visits listed by `affectedSql` (a select of site_id,
 * visit_key, first_seen, last_seen: where each visit's rows can be, as
 * ingest.visits bounds a session's and its one slice a row's without one)
 * from the stored rows: their slices and visit rows are deleted and written
 * again from the rows within those bounds. Visits without rows left
 * disappear, and one change is counted on each of their UTC days. Counters
 * are not touched.
 */
export async function recomputeVisits(
  tx: Queryable,
  affectedSql: string,
  params: Param[],
): Promise<void> {
  await tx.exec(`drop table if exists pg_temp.recompute_visits;
    create temp table recompute_visits
      (site_id text, visit_key text, first_seen timestamptz, last_seen timestamptz)`);
  await tx.query(`insert into pg_temp.recompute_visits ${affectedSql}`, params);
  await tx.exec(
    `delete from ingest.visit_slices s using pg_temp.recompute_visits k
      where s.site_id = k.site_id and s.visit_key = k.visit_key
        and s.bucket >= ${bucket15("k.first_seen")} and s.bucket <= k.last_seen`,
  );
  await tx.exec(
    `delete from ingest.visits v using pg_temp.recompute_visits k
      where v.site_id = k.site_id and v.visit_key = k.visit_key`,
  );
  const within = (kind: keyof typeof KIND) => {
    return `select ${ROW_COLUMNS[kind]} from pg_temp.recompute_visits k
      join ${ROW_TABLE[kind]} x on x.site_id = k.site_id
       and x.received_at >= k.first_seen and x.received_at <= k.last_seen
       and coalesce('s' || x.session_id, 'r' || x.seq) = k.visit_key`;
  };
  await tx.exec(
    upkeepSql(
      [within("pageview"), within("event"), within("lead")].join(" union all "),
      { slices: TABLES.slices, visits: TABLES.visits },
    ),
  );
  // Last, as in the writer (visits locked before changed days), so the two cannot deadlock.
  await tx.exec(countChanges(visitDays("pg_temp.recompute_visits")));
  await tx.exec("drop table pg_temp.recompute_visits");
}

/**
 * Removes the rows of `rowsSql` (ROW_COLUMNS, of one site, about to be
 * deleted) from the counters and their days.
 */
export async function subtractCounters(
  tx: Queryable,
  siteId: string,
  rowsSql: string,
  params: Param[],
): Promise<void> {
  // Takes the sums of `from` off `table`, matching them on `key`.
  const subtract = (table: string, key: string[], from: string) =>
    `update ${table} c
        set n = c.n - g.n, valued = c.valued - g.valued, revenue = c.revenue - g.revenue
       from ${from} g
      where (${key.map((k) => `c.${k}`).join(", ")}) = (${key.map((k) => `g.${k}`).join(", ")})
      returning 1`;
  await tx.query(
    `with d as (${rowsSql}),
     gone as (${COUNTER_DELTAS}),
     updated as (${subtract(TABLES.counters, COUNTER_KEY, "gone")}),
     gone_days as (
       select site_id, ${utcDay("bucket")} as day, bot, kind, name, currency, sum(n) as n,
              sum(valued) as valued, sum(revenue) as revenue
         from gone group by 1, 2, 3, 4, 5, 6),
     updated_days as (${subtract(TABLES.counterDays, DAY_KEY, "gone_days")})
     select (select count(*) from updated), (select count(*) from updated_days)`,
    params,
  );
  // Second statements: one statement cannot delete the rows its own update changed.
  await tx.query(`delete from ${TABLES.counters} where site_id = $1 and n = 0`, [siteId]);
  await tx.query(`delete from ${TABLES.counterDays} where site_id = $1 and n = 0`, [siteId]);
}

/** What a rebuild changed in one table. */
export interface TableChange {
  table: string;
  added: number;
  removed: number;
  changed: number;
}

const TABLE_SHAPES = [
  {
    table: TABLES.counters,
    key: COUNTER_KEY,
    values: ["n", "valued", "revenue"],
  },
  {
    table: TABLES.counterDays,
    key: DAY_KEY,
    values: ["n", "valued", "revenue"],
  },
  {
    table: TABLES.slices,
    key: SLICE_KEY,
    values: ["first_at", "last_at", "pageviews", "events", "leads", ...VISIT_ATTRIBUTES],
  },
  {
    table: TABLES.visits,
    key: ["site_id", "visit_key"],
    values: ["first_seen", "last_seen", "first_rank", "first_at", "first_seq", ...VISIT_ATTRIBUTES],
  },
];

/**
 * Recomputes a site's derived tables from its stored rows and writes only
 * the differences; answers, per table, the rows added, removed and changed.
 * Every day of the site's slices counts a change, so its period sums are
 * built again.
 * Writers of the site's rows wait while it runs (the row tables are locked
 * in share mode), so no write falls between the recount and the fix.
 */
export async function rebuildSite(tx: Queryable, siteId: string): Promise<TableChange[]> {
  await tx.exec("lock table ingest.page_views, ingest.events, ingest.leads in share mode");
  const temp = (table: string) => `pg_temp.rebuild_${table.split(".")[1]}`;
  for (const { table } of TABLE_SHAPES) {
    await tx.exec(`drop table if exists ${temp(table)}`);
    await tx.exec(`create temp table ${temp(table)}
      (like ${table} including defaults including constraints including indexes)`);
  }
  const where = "x.site_id = $1";
  await tx.query(
    upkeepSql(
      [storedRows("pageview", where), storedRows("event", where), storedRows("lead", where)]
        .join(" union all "),
      {
        counters: temp(TABLES.counters),
        counterDays: temp(TABLES.counterDays),
        slices: temp(TABLES.slices),
        visits: temp(TABLES.visits),
      },
    ),
    [siteId],
  );
  // The period sums of every day the site's slices cover, before or after, are built again.
  const sliceDays = (table: string) =>
    `select distinct site_id, ${utcDay("bucket")} as day from ${table} where site_id = $1`;
  await tx.query(
    countChanges(
      `select site_id, (extract(epoch from day) * 1000)::bigint as day
         from (${sliceDays(TABLES.slices)} union ${sliceDays(temp(TABLES.slices))}) x`,
    ),
    [siteId],
  );
  await tx.query(
    `insert into ingest.visit_spans as v
       select site_id, max(last_seen - first_seen) from ${temp(TABLES.visits)} group by site_id
     on conflict (site_id) do update set longest = greatest(v.longest, excluded.longest)`,
  );
  const changes: TableChange[] = [];
  for (const { table, key, values } of TABLE_SHAPES) {
    const t = temp(table);
    const joinOn = key.map((k) => `r.${k} = t.${k}`).join(" and ");
    const same = `(${values.map((c) => `r.${c}`).join(", ")}) is not distinct from (${
      values.map((c) => `t.${c}`).join(", ")
    })`;
    const [row] = await tx.query<{ added: number; removed: number; changed: number }>(
      `select count(*) filter (where r.site_id is null)::int as added,
              count(*) filter (where t.site_id is null)::int as removed,
              count(*) filter (where r.site_id is not null and t.site_id is not null
                                 and not ${same})::int as changed
         from (select * from ${table} where site_id = $1) r full join ${t} t on ${joinOn}`,
      [siteId],
    );
    await tx.query(
      `delete from ${table} r where r.site_id = $1
          and not exists (select 1 from ${t} t where ${joinOn} and ${same})`,
      [siteId],
    );
    await tx.exec(
      `insert into ${table} select t.* from ${t} t
        where not exists (select 1 from ${table} r where ${joinOn})`,
    );
    await tx.exec(`drop table ${t}`);
    changes.push({ table, ...row });
  }
  return changes;
}

/**
 * After retention deleted page views and events before `cutoff` (leads
 * stay): their counters go (the cutoff's own bucket is counted again from
 * the rows left in it, and the cutoff's day summed again from its quarter
 * hours), and every visit that began before the cutoff is recomputed from
 * its rows left (its attribution may now come from a later page view; a
 * visit with no row left disappears).
 */
export async function afterRetention(tx: Queryable, cutoff: string): Promise<void> {
  const bucket = `${bucket15("$1::text::timestamptz")}`;
  const day = `${utcDay("$1::text::timestamptz")}`;
  const pvEvents = `kind in (${KIND.pageview}, ${KIND.event})`;
  await tx.query(`delete from ${TABLES.counters} where ${pvEvents} and bucket <= ${bucket}`, [
    cutoff,
  ]);
  const inBucket =
    `x.received_at >= ${bucket} and x.received_at < ${bucket} + interval '15 minutes'`;
  await tx.query(
    upkeepSql(`${storedRows("pageview", inBucket)} union all ${storedRows("event", inBucket)}`, {
      counters: TABLES.counters,
      counterDays: TABLES.counterDays,
    }),
    [cutoff],
  );
  // The cutoff's day: its rows before the cutoff are gone, so its days are summed again.
  await tx.query(`delete from ${TABLES.counterDays} where ${pvEvents} and day <= ${day}`, [cutoff]);
  await tx.query(
    addToDays(
      TABLES.counterDays,
      `select * from ${TABLES.counters}
        where ${pvEvents} and bucket >= ${day} and bucket < ${day} + interval '1 day'`,
    ),
    [cutoff],
  );
  // Visits begun before the cutoff: those of a session from their rows, the others from their
  // one slice (its bucket is at or before its row's time).
  await recomputeVisits(
    tx,
    `select site_id, visit_key, first_seen, last_seen from ingest.visits
      where first_seen < $1::text::timestamptz
     union all
     select site_id, visit_key, first_at, last_at from ${TABLES.slices}
      where not ${SESSION_VISIT} and bucket < $1::text::timestamptz
        and first_at < $1::text::timestamptz`,
    [cutoff],
  );
}

/**
 * Before a visitor's rows are deleted: their counters are taken off and the
 * visits they belong to noted; after, recomputeErased puts those visits
 * right from the rows left (other visitors' rows of the same sessions).
 */
export async function beforeErase(
  tx: Queryable,
  siteId: string,
  visitorId: string,
  withLeads: boolean,
): Promise<void> {
  const own = "x.site_id = $1 and x.visitor_id = $2";
  const rows = [storedRows("pageview", own), storedRows("event", own)];
  if (withLeads) rows.push(storedRows("lead", own));
  const rowsSql = rows.join(" union all ");
  await subtractCounters(tx, siteId, rowsSql, [siteId, visitorId]);
  await tx.exec(`drop table if exists pg_temp.erased_visits;
    create temp table erased_visits (site_id text, visit_key text, first_at timestamptz,
                                     last_at timestamptz)`);
  await tx.query(
    `insert into pg_temp.erased_visits
       select site_id, visit_key, min(at), max(at) from (${rowsSql}) d group by 1, 2`,
    [siteId, visitorId],
  );
}

/**
 * After the rows' deletion: the visits beforeErase noted, those of a
 * session bounded by ingest.visits, a row's without one by its own time.
 */
export async function recomputeErased(tx: Queryable): Promise<void> {
  await recomputeVisits(
    tx,
    `select v.site_id, v.visit_key, v.first_seen, v.last_seen
       from ingest.visits v join pg_temp.erased_visits e using (site_id, visit_key)
     union all
     select site_id, visit_key, first_at, last_at from pg_temp.erased_visits
      where not ${SESSION_VISIT}`,
    [],
  );
  await tx.exec("drop table pg_temp.erased_visits");
}
