/**
 * Rollups of whole local days and months (rollup_sums.ts says what one
 * holds): read from ingest.visits and the stored rows, kept in
 * ingest.rollups beside their period (ingest.rollup_periods), and read back
 * by queries while they are current.
 *
 * A period's rollup is current while its site's zone, the fingerprint of
 * the rollups' declarations (rollup_fingerprint.ts), the declared event
 * properties and the changes counted on the UTC days it covers (visits.ts)
 * are those it was built with; so nothing needs to be told that a rollup
 * went stale, a changed declaration rebuilds every period by itself, and a
 * query checks it in the same snapshot as it reads it. ingest-service builds the ended periods of every site in
 * the background (buildAllRollups), each in one transaction that sees one
 * snapshot of rows and changes.
 */
import { Buffer } from "node:buffer";
import type { Database, Param, Queryable } from "../../lib/db/mod.ts";
import { bucketsOf, localDay, startOfDay } from "./calendar.ts";
import { KIND, pageOf, VISIT_ATTRIBUTES, visitKeyOf, visitorKeyOf } from "./dimensions.ts";
import { type RollupDeclarations, rollupFingerprint, rulesProbe } from "./rollup_fingerprint.ts";
import { decodeSet, encodeSet } from "./visitor_sets.ts";
import {
  ALL,
  emptySums,
  everyGroup,
  keyText,
  PAGE,
  PROPS,
  type RollupKey,
  rollupOf,
  type RowRecord,
  type Sums,
  type VisitRecord,
  type Wanted,
} from "./rollup_sums.ts";
import { iso, Params, textArray } from "./plan.ts";
import { humanPart } from "./base.ts";

export interface Period {
  start: number;
  end: number;
}

/** The condition that a period of ingest.rollup_periods (alias p) is current. */
export function currentPeriod(params: { add(value: Param): string }, site: RollupSite): string {
  return `p.zone = ${params.add(site.zone)} and p.fingerprint = ${params.add(site.fingerprint)}
      and p.props = ${params.add(textArray(site.props))}::text[]
      and p.changes = (select coalesce(sum(c.changes), 0) from ingest.stat_day_changes c
                        where c.site_id = p.site_id and c.day < p.period_end
                          and c.day > p.period_start - interval '1 day')`;
}

/**
 * What rollups of a site depend on besides its rows: the zone, the declared
 * properties, and the fingerprint of the declarations they are built by.
 */
export interface RollupSite {
  siteId: string;
  zone: string;
  /** Every parameter key of the site's event types, sorted. */
  props: string[];
  /** ROLLUP_FINGERPRINT, unless a test builds or reads by other declarations. */
  fingerprint: string;
}

/** A period's visits ($1 site, $2 start, $3 end) with the attribute `columns`. */
const periodVisits = (columns: readonly string[]) =>
  `with longest as (select coalesce(max(longest), interval '0') as span
                      from ingest.visit_spans where site_id = $1)
   select v.visit_key, v.first_at >= $2::timestamptz and not v.bot as begins, v.mixed,
          v.pageviews, v.events,
          (extract(epoch from v.last_at - v.first_at) * 1000)::float8 as duration_ms
          ${columns.map((c) => `, v.${c}`).join("")}
     from ingest.visits v
    where v.site_id = $1 and v.first_at >= $2::timestamptz - (select span from longest)
      and v.first_at < $3::timestamptz and v.last_at >= $2::timestamptz`;

/** The human rows' part of mixed visits ($4 their keys as a text array). */
const MIXED_VISITS =
  `select v.visit_key, h.first_at >= $2::timestamptz and h.first_at < $3::timestamptz as begins,
          h.pageviews, h.events, h.duration_ms, h.exit_page
     from ingest.visits v cross join lateral (${humanPart("v")}) h
    where v.site_id = $1 and v.visit_key = any($4::text[])`;

const within = (x: string) =>
  `${x}.site_id = $1 and ${x}.received_at >= $2::timestamptz and ${x}.received_at < $3::timestamptz`;
const keys = (x: string) =>
  `${x}.seq, ${visitKeyOf(x)} as visit_key, ${visitorKeyOf(x)} as visitor_key`;

/** A period's rows, bots left out, each with its visit, visitor and visitor's number. */
const PERIOD_ROWS =
  `select r.kind, r.name, r.page, r.props, r.value::text as value, r.currency, r.visit_key,
          r.visitor_key,
          coalesce(n.number, case when r.visitor_key like 'r%' then -r.seq end)::text as number
     from (
       select ${KIND.pageview} as kind, null::text as name, ${pageOf("p")} as page,
              null::json as props, null::bigint as value, null::text as currency, ${keys("p")}
         from ingest.page_views p where ${within("p")} and not p.bot
       union all
       select ${KIND.event}, e.name, ${pageOf("e")}, e.params, e.value, e.currency, ${keys("e")}
         from ingest.events e where ${within("e")} and e.bot is not true
       union all
       select ${KIND.lead}, null, null, null, null, null, ${keys("l")} from ingest.leads l
        where ${within("l")}
     ) r
     left join ingest.visitor_numbers n on n.site_id = $1 and n.visitor_key = r.visitor_key`;

/** Numbers the visitors of a period's rows (those of a row alone keep -seq). */
const NUMBER_VISITORS = (() => {
  const rowKeys = (table: string) =>
    `select ${visitorKeyOf("x")} as k from ${table} x
      where ${within("x")} and (x.visitor_id is not null or x.session_id is not null)`;
  return `insert into ingest.visitor_numbers (site_id, visitor_key)
     select $1, k from (${rowKeys("ingest.page_views")} union ${rowKeys("ingest.events")}
                        union ${rowKeys("ingest.leads")}) x order by k
     on conflict do nothing`;
})();

/**
 * The visits and rows of [start, end), bots left out: every visit with a row
 * in it (its attribute values, shared by its rows' records; a mixed visit's
 * exit page that of its human rows), those that begin in it with their
 * values over all their rows (a mixed visit's beginning and values those of
 * its human rows; a visit of bots alone is none), and the rows, each with
 * its visitor's number.
 */
async function recordsOf(
  tx: Queryable,
  siteId: string,
  period: Period,
  columns: readonly string[],
): Promise<{ visits: VisitRecord[]; rows: RowRecord[] }> {
  const at = [siteId, iso(period.start), iso(period.end)];
  const found = await tx.query<Record<string, unknown>>(periodVisits(columns), at);
  // A mixed visit (rare) counts as its human rows say: when they begin, their values, exit page.
  const mixed = found.filter((v) => v.mixed);
  if (mixed.length > 0) {
    const human = await tx.query<Record<string, unknown>>(
      MIXED_VISITS,
      [...at, `{${mixed.map((v) => `"${v.visit_key}"`).join(",")}}`],
    );
    const byKey = new Map(human.map((h) => [h.visit_key, h]));
    for (const v of mixed) {
      const h = byKey.get(v.visit_key);
      Object.assign(v, {
        begins: h?.begins === true,
        pageviews: h?.pageviews,
        events: h?.events,
        duration_ms: h?.duration_ms,
        ...(columns.includes("exit_page") ? { exit_page: h?.exit_page ?? null } : {}),
      });
    }
  }
  const attributes = new Map<string, Record<string, string | null>>();
  const visits: VisitRecord[] = [];
  for (const v of found) {
    const values = Object.fromEntries(columns.map((c) => [c, v[c] as string | null]));
    attributes.set(v.visit_key as string, values);
    if (v.begins !== true) continue;
    visits.push({
      pageviews: Number(v.pageviews),
      events: Number(v.events),
      durationMs: Number(v.duration_ms),
      attributes: values,
    });
  }
  const rows = await tx.query<{
    kind: number;
    name: string | null;
    page: string | null;
    props: Record<string, unknown> | null;
    value: string | null;
    currency: string | null;
    visit_key: string;
    visitor_key: string;
    number: string | null;
  }>(PERIOD_ROWS, at);
  const none: Record<string, string | null> = {};
  return {
    visits,
    rows: rows.map((r) => ({
      kind: Number(r.kind),
      name: r.name,
      page: r.page,
      props: r.props,
      value: r.value === null ? null : Number(r.value),
      currency: r.currency,
      visitorNumber: r.number === null ? null : Number(r.number),
      visitorKey: r.visitor_key,
      attributes: attributes.get(r.visit_key) ?? none,
    })),
  };
}

/** The sums of the wanted groups of [start, end), from the stored rows and visits. */
export async function sumsOf(
  tx: Queryable,
  siteId: string,
  period: Period,
  wanted: Wanted,
): Promise<Map<string, { key: RollupKey; sums: Sums }>> {
  const { visits, rows } = await recordsOf(tx, siteId, period, wanted.attributes);
  return rollupOf(visits, rows, wanted);
}

/** A group's sums as ingest.rollups stores them (JSON for json_to_recordset). */
export function storedRow(key: RollupKey, sums: Sums, visitDimension: boolean) {
  return {
    dimension: key.dimension,
    value: key.value,
    event_name: key.eventName,
    visitors: sums.visitorNumbers.size,
    visitor_set: Buffer.from(encodeSet(sums.visitorNumbers)).toString("base64"),
    visits: visitDimension ? sums.visits : null,
    bounces: visitDimension ? sums.bounces : null,
    duration_ms: visitDimension ? Math.round(sums.durationMs) : null,
    visit_pageviews: visitDimension ? sums.visitPageviews : null,
    pageviews: sums.pageviews,
    events: sums.events,
    leads: sums.leads,
    revenue: JSON.stringify(Object.fromEntries([...sums.revenue].map(([c, v]) => [c, String(v)]))),
  };
}

/** What decides what a rollup holds (rollup_fingerprint.ts). */
export const ROLLUP_DECLARATIONS: RollupDeclarations = {
  attributes: VISIT_ATTRIBUTES,
  dimensions: { all: ALL, page: PAGE, props: PROPS },
  sums: Object.keys(storedRow({ dimension: ALL, value: null, eventName: null }, emptySums(), true)),
  statements: {
    visits: periodVisits(VISIT_ATTRIBUTES.map((a) => a.column)),
    mixed: MIXED_VISITS,
    rows: PERIOD_ROWS,
    numbers: NUMBER_VISITORS,
  },
  rules: rulesProbe(
    VISIT_ATTRIBUTES.map((a) => a.column),
    (key, sums) => storedRow(key, sums, !key.dimension.startsWith("event:")),
  ),
};

/** The fingerprint every rollup period this code builds or reads is stored with. */
export const ROLLUP_FINGERPRINT = rollupFingerprint(ROLLUP_DECLARATIONS);

/** Stores a period's rollup, replacing the one before. */
async function storePeriod(
  tx: Queryable,
  site: RollupSite,
  period: Period,
  groups: Iterable<{ key: RollupKey; sums: Sums }>,
): Promise<void> {
  const at = [site.siteId, iso(period.start), iso(period.end)];
  await tx.query(
    `delete from ingest.rollup_periods
      where site_id = $1 and period_start = $2::timestamptz and period_end = $3::timestamptz`,
    at,
  );
  await tx.query(
    // version is for readers that check a version instead of the fingerprint: 0 is none they
    // take as current, so they never read a period built by declarations they do not know.
    `insert into ingest.rollup_periods
       (site_id, period_start, period_end, zone, version, fingerprint, props, changes)
     select $1, $2::timestamptz, $3::timestamptz, $4, 0, $5, $6::text[],
            coalesce(sum(c.changes), 0)
       from ingest.stat_day_changes c
      where c.site_id = $1 and c.day < $3::timestamptz and c.day > $2::timestamptz - interval '1 day'`,
    [...at, site.zone, site.fingerprint, textArray(site.props)],
  );
  const rows = [...groups].map(({ key, sums }, position) => ({
    position,
    ...storedRow(key, sums, !key.dimension.startsWith("event:")),
  }));
  await tx.query(
    `insert into ingest.rollups (site_id, period_start, period_end, position, dimension, value,
            event_name, visitors, visitor_set, visits, bounces, duration_ms, visit_pageviews,
            pageviews, events, leads, revenue)
     select $1, $2::timestamptz, $3::timestamptz, r.position, r.dimension, r.value, r.event_name,
            r.visitors, decode(r.visitor_set, 'base64'), r.visits, r.bounces, r.duration_ms,
            r.visit_pageviews, r.pageviews, r.events, r.leads, r.revenue::json
       from json_to_recordset($4::json) as r(position int, dimension text, value text,
            event_name text, visitors bigint, visitor_set text, visits bigint, bounces bigint,
            duration_ms bigint, visit_pageviews bigint, pageviews bigint, events bigint,
            leads bigint, revenue text)`,
    [...at, JSON.stringify(rows)],
  );
}

/** A stored group of a current period, as a query reads it. */
export interface StoredGroup {
  period: Period;
  key: RollupKey;
  visitors: number;
  /** The visitor set's bytes, when asked for. */
  visitorSet?: Uint8Array;
  visits: number;
  bounces: number;
  durationMs: number;
  visitPageviews: number;
  pageviews: number;
  events: number;
  leads: number;
  revenue: Map<string, bigint>;
}

/**
 * Which of `periods` are current, and their groups of `dimensions`: one
 * statement, so the check and the read see one snapshot.
 */
export async function readRollups(
  tx: Queryable,
  site: RollupSite,
  periods: readonly Period[],
  options: { dimensions: readonly string[]; sets: boolean },
): Promise<{ current: Period[]; groups: StoredGroup[] }> {
  if (periods.length === 0) return { current: [], groups: [] };
  const params = new Params();
  const rows = await tx.query<Record<string, unknown>>(
    `select (extract(epoch from p.period_start) * 1000)::float8 as start_ms,
            (extract(epoch from p.period_end) * 1000)::float8 as end_ms,
            r.dimension, r.value, r.event_name, r.visitors::float8 as visitors,
            ${options.sets ? "r.visitor_set" : "null::bytea as visitor_set"},
            r.visits::float8 as visits, r.bounces::float8 as bounces,
            r.duration_ms::float8 as duration_ms, r.visit_pageviews::float8 as visit_pageviews,
            r.pageviews::float8 as pageviews, r.events::float8 as events,
            r.leads::float8 as leads, r.revenue::text as revenue
       from unnest(${params.add(`{${periods.map((x) => iso(x.start)).join(",")}}`)}::timestamptz[],
                   ${params.add(`{${periods.map((x) => iso(x.end)).join(",")}}`)}::timestamptz[])
         as c(s, e)
       join ingest.rollup_periods p on p.period_start = c.s and p.period_end = c.e
       -- Period by period (lateral, offset 0 keeps it so): with statistics from before the
       -- builder added periods, a join read every period's groups of the dimension for each.
       left join lateral (
         select * from ingest.rollups r
          where r.site_id = p.site_id and r.period_start = p.period_start
            and r.period_end = p.period_end
            and r.dimension = any(${params.add(textArray(options.dimensions))}::text[])
         offset 0) r on true
      where p.site_id = ${params.add(site.siteId)} and ${currentPeriod(params, site)}`,
    params.list,
  );
  const current = new Map<string, Period>();
  const groups: StoredGroup[] = [];
  for (const r of rows) {
    const period = { start: Number(r.start_ms), end: Number(r.end_ms) };
    // A month and its first day begin together: a period is its start and its end.
    current.set(`${period.start}/${period.end}`, period);
    if (r.dimension === null) continue;
    groups.push({
      period,
      key: {
        dimension: r.dimension as string,
        value: r.value as string | null,
        eventName: r.event_name as string | null,
      },
      visitors: Number(r.visitors),
      visitorSet: r.visitor_set ? new Uint8Array(r.visitor_set as Uint8Array) : undefined,
      visits: Number(r.visits ?? 0),
      bounces: Number(r.bounces ?? 0),
      durationMs: Number(r.duration_ms ?? 0),
      visitPageviews: Number(r.visit_pageviews ?? 0),
      pageviews: Number(r.pageviews),
      events: Number(r.events),
      leads: Number(r.leads),
      revenue: new Map(
        Object.entries(JSON.parse(r.revenue as string) as Record<string, string>)
          .map(([c, v]) => [c, BigInt(v)]),
      ),
    });
  }
  return { current: [...current.values()], groups };
}

/** The local days [start, end) of `zone` from the day of `fromMs` up to `toDay` (exclusive). */
export function localDays(zone: string, fromMs: number, toDay: Temporal.PlainDate): Period[] {
  const out: Period[] = [];
  for (let day = localDay(fromMs, zone); Temporal.PlainDate.compare(day, toDay) < 0;) {
    const next = day.add({ days: 1 });
    out.push({ start: startOfDay(day, zone), end: startOfDay(next, zone) });
    day = next;
  }
  return out;
}

/** The local months whose every day is among `days` (in order), as periods. */
export function wholeMonths(zone: string, days: readonly Period[]): Period[] {
  if (days.length === 0) return [];
  const buckets = bucketsOf("month", zone, days[0].start, days[days.length - 1].end);
  const months: Period[] = [];
  buckets.starts.forEach((start, i) => {
    const end = buckets.starts[i + 1] ?? days[days.length - 1].end;
    const first = localDay(start, zone);
    const last = localDay(end - 1, zone);
    if (first.day === 1 && last.add({ days: 1 }).day === 1) months.push({ start, end });
  });
  return months;
}

/** Runs fn in one transaction seeing one snapshot, holding the site's builder lock; undefined when another holds it. */
function underSiteLock<T>(
  db: Database,
  siteId: string,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T | undefined> {
  return db.transaction(async (tx) => {
    await tx.exec("set transaction isolation level repeatable read");
    const [lock] = await tx.query<{ locked: boolean }>(
      "select pg_try_advisory_xact_lock(hashtext('rollups'), hashtext($1)) as locked",
      [siteId],
    );
    if (!lock.locked) return undefined;
    // JIT compiling a statement run once costs more than it saves.
    if (db.kind === "postgres") await tx.exec("set local jit = off");
    return await fn(tx);
  });
}

/** Gives the visitors of the rows of `period` a number each (those of a row alone keep -seq). */
async function numberVisitors(tx: Queryable, siteId: string, period: Period): Promise<void> {
  await tx.query(NUMBER_VISITORS, [siteId, iso(period.start), iso(period.end)]);
}

/** Merges stored groups (of one period's days) into one group per key, their sets united. */
function mergeStored(groups: readonly StoredGroup[]): Map<string, { key: RollupKey; sums: Sums }> {
  const merged = new Map<string, { key: RollupKey; sums: Sums }>();
  for (const g of groups) {
    const text = keyText(g.key);
    let m = merged.get(text);
    if (!m) merged.set(text, m = { key: g.key, sums: emptySums() });
    const s = m.sums;
    for (const n of decodeSet(g.visitorSet!)) s.visitorNumbers.add(n);
    s.visits += g.visits;
    s.bounces += g.bounces;
    s.durationMs += g.durationMs;
    s.visitPageviews += g.visitPageviews;
    s.pageviews += g.pageviews;
    s.events += g.events;
    s.leads += g.leads;
    for (const [c, v] of g.revenue) s.revenue.set(c, (s.revenue.get(c) ?? 0n) + v);
  }
  return merged;
}

/**
 * Builds the rollups of a site's ended local days and months that are not
 * current, each in a transaction of its own (days first; a month from its
 * days once they are all current). Stops between periods when `signal` is
 * aborted. Answers how many periods it built.
 */
export async function buildRollups(
  db: Database,
  site: RollupSite,
  nowMs: number,
  signal?: AbortSignal,
): Promise<{ built: number }> {
  const [first] = await db.query<{ ms: number | null }>(
    `select (extract(epoch from min(first_at)) * 1000)::float8 as ms from ingest.visits
      where site_id = $1`,
    [site.siteId],
  );
  await db.query(
    "delete from ingest.rollup_periods where site_id = $1 and zone <> $2",
    [site.siteId, site.zone],
  );
  if (first?.ms === null || first?.ms === undefined) return { built: 0 };
  const days = localDays(site.zone, Number(first.ms), localDay(nowMs, site.zone));
  const months = wholeMonths(site.zone, days);
  const all = [...days, ...months];
  const { current } = await readRollups(db, site, all, { dimensions: [], sets: false });
  const done = new Set(current.map((p) => `${p.start}/${p.end}`));
  let built = 0;
  for (const day of days) {
    if (signal?.aborted) return { built };
    if (done.has(`${day.start}/${day.end}`)) continue;
    const stored = await underSiteLock(db, site.siteId, async (tx) => {
      await numberVisitors(tx, site.siteId, day);
      await storePeriod(
        tx,
        site,
        day,
        (await sumsOf(tx, site.siteId, day, everyGroup(site.props))).values(),
      );
      return true;
    });
    if (stored) built++;
  }
  for (const month of months) {
    if (signal?.aborted) return { built };
    if (done.has(`${month.start}/${month.end}`)) continue;
    const inMonth = days.filter((d) => d.start >= month.start && d.end <= month.end);
    const stored = await underSiteLock(db, site.siteId, async (tx) => {
      const read = await readRollups(tx, site, inMonth, {
        dimensions: ALL_DIMENSIONS(site),
        sets: true,
      });
      if (read.current.length !== inMonth.length) return false; // a day went stale meanwhile
      await storePeriod(tx, site, month, mergeStored(read.groups).values());
      return true;
    });
    if (stored) built++;
  }
  return { built };
}

/** Every dimension a site's rollups hold. */
const ALL_DIMENSIONS = (site: RollupSite) => [
  ALL,
  ...VISIT_ATTRIBUTES.map((a) => a.dimension),
  PAGE,
  ...site.props.map((k) => `${PROPS}${k}`),
];

/** What rollups of a site depend on, or undefined for an unknown site. */
export async function rollupSite(db: Queryable, siteId: string): Promise<RollupSite | undefined> {
  const [row] = await db.query<{ zone: string | null; props: string[] | null }>(
    `select s.time_zone as zone,
            (select array_agg(distinct p->>'key' order by p->>'key')
               from ingest.event_types t cross join json_array_elements(t.params) p
              where t.site_id = s.site_id) as props
       from ingest.sites s where s.site_id = $1`,
    [siteId],
  );
  if (!row) return undefined;
  return {
    siteId,
    zone: row.zone ?? "UTC",
    props: row.props ?? [],
    fingerprint: ROLLUP_FINGERPRINT,
  };
}

/** Builds the rollups of every site, one after the other; stops between sites when aborted. */
export async function buildAllRollups(
  db: Database,
  nowMs: number,
  signal?: AbortSignal,
): Promise<{ built: number }> {
  const sites = await db.query<{ site_id: string }>(
    "select site_id from ingest.sites order by site_id",
  );
  let built = 0;
  for (const { site_id } of sites) {
    if (signal?.aborted) break;
    const site = await rollupSite(db, site_id);
    if (site) built += (await buildRollups(db, site, nowMs, signal)).built;
  }
  return { built };
}
