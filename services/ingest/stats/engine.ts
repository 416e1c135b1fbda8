/**
 * The engine the service uses: what decide.ts decides answers a query
 * (rollups, ingest.visits and the rows, or the rows alone), read in one
 * snapshot.
 *
 * Rollups (rollup_sums.ts) count rows in their own period and visits in the
 * period they begin in with all their rows; so a range's sums are the sums
 * of its periods, except for the visits crossing its start or end, whose
 * part inside the range this engine works out from their rows and puts in
 * place of what the rollups counted. The visitors of several periods are
 * the size of the union of their visitor sets. exit_page is the one
 * attribute that depends on the range (the last page view in it): rows of a
 * visit crossing the range's end move to their exit page in the range, and
 * their visitors' memberships are worked out again from their rows.
 *
 * Everything a query reads happens in one transaction that sees one
 * snapshot, so a rollup's check and its read agree with the rows read beside
 * them: the service's own (ReportReads.run, on the replica when there is
 * one), else one of the engine's.
 */
import type { Database, Queryable } from "../../lib/db/mod.ts";
import { inSnapshot as inOneSnapshot } from "../../lib/db/report_reads.ts";
import { runAggregate } from "./aggregate.ts";
import { decide, type Grouping, type RollupRead } from "./decide.ts";
import { baseSources, humanPart, longestVisitMs, rowsWithin, visitPart } from "./base.ts";
import { labelOf, localDay } from "./calendar.ts";
import { KIND, visitKeyOf, visitorKeyOf } from "./dimensions.ts";
import { funnelOf } from "./funnel.ts";
import {
  emptySums as emptyPartialSums,
  filterCondition,
  instant,
  Params,
  type Partials,
  type Plan,
  type Sums as PartialSums,
  textArray,
} from "./plan.ts";
import {
  type Filter,
  grainOf,
  isPropsDimension,
  isTimeDimension,
  type StatsQuery,
} from "./query.ts";
import { referenceEngine, rowsSources } from "./reference.ts";
import { ALL, emptySums, PAGE, type RollupKey, type Sums, type Wanted } from "./rollup_sums.ts";
import {
  localDays,
  type Period,
  readRollups,
  type RollupSite,
  rollupSite,
  type StoredGroup,
  sumsOf,
  wholeMonths,
} from "./rollups.ts";
import type { StatsEngine } from "./service.ts";
import { VisitorUnion } from "./visitor_sets.ts";

/** The most days a rollup query works out from the rows; beyond, the base tables answer. */
const MAX_DAYS_FROM_ROWS = 7;

/** A visit crossing the range's start or end: what rollups counted of it, and its part inside. */
interface Crossing {
  visitKey: string;
  /** Where rollups count it: its (human) first time, when inside the range; its values there. */
  countedAt: number | null;
  whole: { pv: number; ev: number; durationMs: number; exit: string | null };
  /** Its first time, values and exit page within the range. */
  insideAt: number;
  inside: { pv: number; ev: number; durationMs: number; exit: string | null };
  /** The value of the query's visit attribute (its column), besides exit_page. */
  value: string | null;
  crossesEnd: boolean;
}

async function crossingVisits(
  tx: Queryable,
  plan: Plan,
  column: string | undefined,
): Promise<Crossing[]> {
  const params = new Params();
  const site = params.add(plan.siteId);
  const from = instant(params, plan.startMs);
  const to = instant(params, plan.endMs);
  // A visit crossing an instant began at most the longest visit before it: two short
  // stretches of the index by first time, not every visit of the range.
  const longest = await longestVisitMs(tx, plan.siteId);
  const earliest = instant(params, plan.startMs - longest);
  const endsAfter = instant(params, Math.max(plan.startMs, plan.endMs - longest));
  const inside = `(select c.site_id, c.visit_key, greatest(c.first_at, ${from}) as lo,
      least(c.last_at + interval '1 microsecond', ${to}) as hi)`;
  const value = column && column !== "exit_page" ? `c.${column}` : "null::text";
  const answer = await tx.query<Record<string, unknown>>(
    `select c.visit_key, ${value} as value, c.last_at >= ${to} as crosses_end,
            (extract(epoch from coalesce(h.first_at, c.first_at)) * 1000)::float8 as counted_at,
            coalesce(h.pageviews, c.pageviews) as whole_pv, coalesce(h.events, c.events) as whole_ev,
            coalesce(h.duration_ms,
                     (extract(epoch from c.last_at - c.first_at) * 1000)::float8) as whole_ms,
            case when c.mixed then h.exit_page else c.exit_page end as whole_exit,
            (extract(epoch from i.first_at) * 1000)::float8 as inside_at,
            i.pageviews as pv, i.events as ev, i.duration_ms, i.exit_page
       from ingest.visits c
       left join lateral (${humanPart("c")}) h on c.mixed
       cross join lateral (${visitPart(inside)}) i
      where c.site_id = ${site} and c.last_at >= ${from} and (c.mixed or not c.bot)
        and ((c.first_at >= ${earliest} and c.first_at < ${from})
             or (c.first_at >= ${endsAfter} and c.first_at < ${to} and c.last_at >= ${to}))`,
    params.list,
  );
  return answer.map((r) => {
    const countedAt = Number(r.counted_at);
    return {
      visitKey: r.visit_key as string,
      countedAt: countedAt >= plan.startMs && countedAt < plan.endMs ? countedAt : null,
      whole: {
        pv: Number(r.whole_pv),
        ev: Number(r.whole_ev),
        durationMs: Number(r.whole_ms),
        exit: r.whole_exit as string | null,
      },
      insideAt: Number(r.inside_at),
      inside: {
        pv: Number(r.pv),
        ev: Number(r.ev),
        durationMs: Number(r.duration_ms),
        exit: r.exit_page as string | null,
      },
      value: r.value as string | null,
      crossesEnd: r.crosses_end as boolean,
    };
  });
}

/** A row of a visitor whose exit-page memberships are worked out again. */
interface MovedRow {
  at: number;
  kind: number;
  value: number | null;
  currency: string | null;
  visitorNumber: number | null;
  visitorKey: string;
  visitKey: string;
  exit: string | null;
}

/**
 * The rows in the range of the visitors who have a row in one of `visits`
 * (keys), each with its visit's exit page as stored (human rows' for a
 * mixed visit); the caller puts the range's exit page in place for the
 * crossing visits.
 */
async function rowsOfVisitors(tx: Queryable, plan: Plan, visits: string[]): Promise<MovedRow[]> {
  const keyParams = new Params();
  const site = keyParams.add(plan.siteId);
  const bounds = (alias: string) =>
    `greatest(${alias}.first_at, ${instant(keyParams, plan.startMs)}) as lo,
     least(${alias}.last_at + interval '1 microsecond', ${instant(keyParams, plan.endMs)}) as hi`;
  // Their visitors: each visit's rows in the range, found through the visit's own bounds.
  const keys = await tx.query<{ visitor_key: string }>(
    `with moved as (select v.site_id, v.visit_key, ${bounds("v")} from ingest.visits v
                     where v.site_id = ${site} and v.visit_key = any(${
      keyParams.add(textArray(visits))
    }::text::text[]))
     select distinct visitor_key from (${rowsWithin("moved", false)}) w`,
    keyParams.list,
  );
  // A visitor with an id is found by the index of ids; one without is its visit's rows alone.
  const ids = keys.filter((k) => k.visitor_key.startsWith("v")).map((k) => k.visitor_key.slice(1));
  const alone = keys.filter((k) => !k.visitor_key.startsWith("v")).map((k) => k.visitor_key);
  const params = new Params();
  params.add(plan.siteId);
  const from = instant(params, plan.startMs);
  const to = instant(params, plan.endMs);
  const idList = params.add(textArray(ids));
  const aloneList = params.add(textArray(alone));
  const rows = (table: string, kind: number, value: string, human: string) => {
    const columns = `${kind} as kind, x.received_at as at, x.seq, ${value},
            ${visitKeyOf("x")} as visit_key, ${visitorKeyOf("x")} as visitor_key`;
    return `select ${columns}
       from ${table} x
      where x.site_id = $1 and x.received_at >= ${from} and x.received_at < ${to}
        and ${human} and x.visitor_id is not null and x.visitor_id = any(${idList}::text::text[])
     union all
     select ${columns}
       from ingest.visits a
       cross join lateral (
         select * from ${table} x
          where x.site_id = a.site_id and x.received_at >= greatest(a.first_at, ${from})
            and x.received_at <= a.last_at and x.received_at < ${to}
            and ${visitKeyOf("x")} = a.visit_key and x.visitor_id is null and ${human}
         offset 0) x
      where a.site_id = $1 and a.visit_key = any(${aloneList}::text::text[])`;
  };
  const answer = await tx.query<Record<string, unknown>>(
    `select r.kind, (extract(epoch from r.at) * 1000)::float8 as at, r.value::text as value,
            r.currency, r.visit_key, r.visitor_key,
            coalesce(n.number, case when r.visitor_key like 'r%' then -r.seq end)::text as number,
            case when v.mixed then h.exit_page else v.exit_page end as exit
       from (${
      rows(
        "ingest.page_views",
        KIND.pageview,
        "null::bigint as value, null::text as currency",
        "not x.bot",
      )
    }
             union all ${
      rows("ingest.events", KIND.event, "x.value, x.currency", "x.bot is not true")
    }
             union all ${rows("ingest.leads", KIND.lead, "null, null", "true")}) r
       join ingest.visits v on v.site_id = $1 and v.visit_key = r.visit_key
       left join lateral (${humanPart("v")}) h on v.mixed
       left join ingest.visitor_numbers n on n.site_id = $1 and n.visitor_key = r.visitor_key`,
    params.list,
  );
  return answer.map((r) => ({
    at: Number(r.at),
    kind: Number(r.kind),
    value: r.value === null ? null : Number(r.value),
    currency: r.currency as string | null,
    visitorNumber: r.number === null ? null : Number(r.number),
    visitorKey: r.visitor_key as string,
    visitKey: r.visit_key as string,
    exit: r.exit as string | null,
  }));
}

/** One group of the answer being put together. */
class Accumulator {
  readonly union = new VisitorUnion();
  readonly sums: Omit<PartialSums, "visitors" | "reached" | "converted"> = emptyPartialSums();
  /** conversion_rate: the visitors without the event: filters, and those who converted. */
  readonly reached = new VisitorUnion();
  readonly converted = new VisitorUnion();
  /** conversion_rate's group of every visitor reached: listed whatever its sums. */
  holdsReached = false;

  /**
   * Whether a row or a visit is left in the group once every correction is
   * made: a crossing visit moved out of its stored exit page takes its rows
   * and itself along, and the group it leaves may hold nothing of the range.
   */
  get hasData(): boolean {
    const { pageviews, events, leads, visits } = this.sums;
    return this.holdsReached || pageviews + events + leads + visits > 0;
  }

  addStored(g: StoredGroup | { sums: Sums }): void {
    addVisitors(this.union, g);
    const from = "sums" in g ? g.sums : g;
    this.sums.visits += from.visits;
    this.sums.bounces += from.bounces;
    this.sums.durationMs += from.durationMs;
    this.sums.visitPageviews += from.visitPageviews;
    this.sums.pageviews += from.pageviews;
    this.sums.events += from.events;
    this.sums.leads += from.leads;
    for (const [c, v] of from.revenue) {
      this.sums.revenue.set(c, (this.sums.revenue.get(c) ?? 0n) + v);
    }
  }

  addVisit(v: { pv: number; ev: number; durationMs: number }, sign: 1 | -1): void {
    this.sums.visits += sign;
    if (v.pv === 1 && v.ev === 0) this.sums.bounces += sign;
    this.sums.durationMs += sign * v.durationMs;
    this.sums.visitPageviews += sign * v.pv;
  }

  addRow(r: MovedRow, sign: 1 | -1): void {
    if (r.kind === KIND.pageview) this.sums.pageviews += sign;
    else if (r.kind === KIND.event) this.sums.events += sign;
    else this.sums.leads += sign;
    if (r.value !== null && r.currency !== null) {
      this.sums.revenue.set(
        r.currency,
        (this.sums.revenue.get(r.currency) ?? 0n) + BigInt(sign) * BigInt(r.value),
      );
    }
  }

  partial(): PartialSums {
    return {
      ...this.sums,
      visitors: this.union.size,
      reached: this.reached.size,
      converted: this.converted.size,
    };
  }
}

/** Which values pass each filter, as SQL judges them (the same conditions as every engine's). */
async function judgeFilters(
  tx: Queryable,
  filters: readonly Filter[],
  values: (filter: Filter) => Set<string | null>,
): Promise<((value: string | null) => boolean)[]> {
  const judges: ((value: string | null) => boolean)[] = [];
  for (const filter of filters) {
    const list = [...values(filter)];
    const params = new Params();
    const condition = filterCondition(
      filter.dimension === "event:name" ? { ...filter, dimension: "event:page" } : filter,
      "v",
      params,
    );
    const rows = await tx.query<{ v: string | null; ok: boolean }>(
      `select v, ${condition} as ok from unnest(${params.add(textArray(list))}::text[]) v`,
      params.list,
    );
    const passing = new Set(rows.filter((r) => r.ok).map((r) => r.v));
    // Under an event:name filter only custom events match: a row without a name never does.
    const named = filter.dimension === "event:name";
    judges.push((value) => (named && value === null ? false : passing.has(value)));
  }
  return judges;
}

/**
 * Which periods of a query's range (whole local days, decide.ts) rollups
 * answer (whole months where the query is by month or by no time, else
 * days) and which days are worked out from the rows instead (not built, or
 * stale); undefined when too many days are not built.
 */
async function rollupCover(
  tx: Queryable,
  plan: Plan,
  site: RollupSite,
): Promise<{ stored: Period[]; fromRows: Period[] } | undefined> {
  const { query, zone } = plan;
  const days = localDays(zone, plan.startMs, localDay(plan.endMs - 1, zone).add({ days: 1 }));
  const timeDimension = query.dimensions.find(isTimeDimension);
  const grain = timeDimension && grainOf(timeDimension);
  const months = grain === undefined || grain === "month" ? wholeMonths(zone, days) : [];
  const { current } = await readRollups(tx, site, [...months, ...days], {
    dimensions: [],
    sets: false,
  });
  const isCurrent = new Set(current.map((p) => `${p.start}/${p.end}`));
  const stored: Period[] = [];
  const fromRows: Period[] = [];
  const covered = new Set<number>();
  for (const month of months) {
    if (!isCurrent.has(`${month.start}/${month.end}`)) continue;
    stored.push(month);
    for (const day of days) {
      if (day.start >= month.start && day.end <= month.end) covered.add(day.start);
    }
  }
  for (const day of days) {
    if (covered.has(day.start)) continue;
    (isCurrent.has(`${day.start}/${day.end}`) ? stored : fromRows).push(day);
  }
  return fromRows.length > MAX_DAYS_FROM_ROWS ? undefined : { stored, fromRows };
}

/** The answer of a query from rollups, and the days not built from the rows. */
async function rollupPartials(
  tx: Queryable,
  plan: Plan,
  site: RollupSite,
  rollup: RollupRead,
  cover: { stored: Period[]; fromRows: Period[] },
): Promise<Partials> {
  const { query, zone } = plan;
  const timeDimension = query.dimensions.find(isTimeDimension);
  const grain = timeDimension && grainOf(timeDimension);
  const { stored: chosen, fromRows } = cover;
  const dimensions = rollup.conversion ? [rollup.dimension, ALL] : [rollup.dimension];
  const items: { start: number; key: RollupKey; group: StoredGroup | { sums: Sums } }[] = [];
  // Visitor sets are the bulk of a rollup: read only for the metrics that count visitors.
  const sets = query.metrics.some((m) => m === "visitors" || m === "conversion_rate");
  for (const g of (await readRollups(tx, site, chosen, { dimensions, sets })).groups) {
    items.push({ start: g.period.start, key: g.key, group: g });
  }
  const wanted: Wanted = {
    all: dimensions.includes(ALL),
    attributes: rollup.column ? [rollup.column] : [],
    page: rollup.dimension === PAGE,
    props: isPropsDimension(rollup.dimension)
      ? [rollup.dimension.slice("event:props:".length)]
      : [],
  };
  for (const day of fromRows) {
    for (const { key, sums } of (await sumsOf(tx, site.siteId, day, wanted)).values()) {
      items.push({ start: day.start, key, group: { sums } });
    }
  }
  const crossing = rollup.crossing ? await crossingVisits(tx, plan, rollup.column) : [];
  const exitPage = rollup.column === "exit_page";
  const moved = rollup.exitPages
    ? crossing.filter((c) => c.crossesEnd && c.inside.exit !== c.whole.exit)
    : [];
  const movedRows = moved.length > 0
    ? await rowsOfVisitors(tx, plan, moved.map((c) => c.visitKey))
    : [];

  // The filters, judged on every value met.
  const mainValues = new Set<string | null>();
  const names = new Set<string | null>();
  for (const { key } of items) {
    mainValues.add(key.value);
    names.add(key.eventName);
  }
  for (const c of crossing) {
    for (const v of exitPage ? [c.whole.exit, c.inside.exit] : [c.value]) mainValues.add(v);
  }
  for (const r of movedRows) mainValues.add(r.exit);
  const judges = await judgeFilters(
    tx,
    query.filters,
    (f) => (f.dimension === "event:name" ? names : mainValues),
  );
  const passes = (value: string | null, eventName: string | null) =>
    query.filters.every((f, i) => judges[i](f.dimension === "event:name" ? eventName : value));

  const label = (ms: number) => (grain ? labelOf(grain, zone, ms) : null);
  const groups = new Map<string, { dims: (string | null)[]; acc: Accumulator }>();
  const groupOf = (at: number, value: string | null, eventName: string | null) => {
    const dims = query.dimensions.map((d) =>
      isTimeDimension(d) ? label(at) : d === "event:name" ? eventName : value
    );
    const text = JSON.stringify(dims);
    let g = groups.get(text);
    if (!g) groups.set(text, g = { dims, acc: new Accumulator() });
    return g.acc;
  };
  for (const { start, key, group } of items) {
    if (rollup.conversion && key.dimension === ALL) {
      const acc = groupOf(start, null, null);
      addVisitors(acc.reached, group);
      acc.holdsReached = true;
      continue;
    }
    if (!passes(key.value, key.eventName)) continue;
    const acc = groupOf(start, key.value, key.eventName);
    acc.addStored(group);
    if (rollup.conversion && key.eventName !== null) addVisitors(acc.converted, group);
  }
  for (const c of crossing) {
    const whole = exitPage ? c.whole.exit : c.value;
    const inside = exitPage ? c.inside.exit : c.value;
    if (c.countedAt !== null && passes(whole, null)) {
      groupOf(c.countedAt, whole, null).addVisit({ ...c.whole }, -1);
    }
    if (passes(inside, null)) groupOf(c.insideAt, inside, null).addVisit({ ...c.inside }, 1);
  }
  if (moved.length > 0) regroupExits(moved, movedRows, { groups, groupOf, passes });

  const all = new Accumulator();
  const out: Partials = { groups: [], all: emptyPartialSums() };
  for (const { dims, acc } of groups.values()) {
    all.union.addUnion(acc.union);
    all.reached.addUnion(acc.reached);
    all.converted.addUnion(acc.converted);
    all.addStored({ sums: { ...emptySums(), ...acc.sums } });
    if (acc.hasData) out.groups.push({ dims, sums: acc.partial() });
  }
  out.all = all.partial();
  return out;
}

/** Adds a group's visitors (a stored set, or the sets worked out from the rows) to a union. */
function addVisitors(union: VisitorUnion, group: StoredGroup | { sums: Sums }): void {
  if ("sums" in group) {
    union.addNumbers([...group.sums.visitorNumbers]);
    for (const k of group.sums.visitorKeys) union.addKey(k);
  } else if (group.visitorSet) union.addSet(group.visitorSet, group.visitors);
}

/**
 * Moves the rows of visits crossing the range's end from the exit page they
 * were counted under to their exit page within the range, and works out
 * again which groups the visitors of those rows belong to, from all their
 * rows in the range.
 */
function regroupExits(
  moved: readonly Crossing[],
  rows: readonly MovedRow[],
  into: {
    groups: Map<string, { dims: (string | null)[]; acc: Accumulator }>;
    groupOf: (at: number, value: string | null, eventName: string | null) => Accumulator;
    passes: (value: string | null, eventName: string | null) => boolean;
  },
): void {
  const exits = new Map(moved.map((c) => [c.visitKey, c]));
  const numbers = new Set<number>();
  const keys = new Set<string>();
  for (const r of rows) {
    if (r.visitorNumber === null) keys.add(r.visitorKey);
    else numbers.add(r.visitorNumber);
  }
  const members: { at: number; exit: string | null; row: MovedRow }[] = [];
  for (const r of rows) {
    const c = exits.get(r.visitKey);
    if (c) {
      if (into.passes(c.whole.exit, null)) into.groupOf(r.at, c.whole.exit, null).addRow(r, -1);
      if (into.passes(c.inside.exit, null)) into.groupOf(r.at, c.inside.exit, null).addRow(r, 1);
    }
    members.push({ at: r.at, exit: c ? c.inside.exit : r.exit, row: r });
  }
  for (const m of members) {
    if (into.passes(m.exit, null)) into.groupOf(m.at, m.exit, null); // the group exists
  }
  for (const { acc } of into.groups.values()) acc.union.exclude(numbers, keys);
  for (const m of members) {
    if (!into.passes(m.exit, null)) continue;
    into.groupOf(m.at, m.exit, null).union.include(m.row.visitorNumber, m.row.visitorKey);
  }
}

/** The engine: rollups where they answer, ingest.visits and the rows otherwise. */
export function statsEngine(db: Database, options: { workMemMb?: number } = {}): StatsEngine {
  const reference = referenceEngine(db);
  const settings = [
    // JIT compiling costs more than it saves on a statement run once.
    "set local jit = off",
    ...(options.workMemMb === undefined
      ? []
      : [`set local work_mem = '${Math.trunc(options.workMemMb)}MB'`]),
  ];
  const inSnapshot = <T>(run: (tx: Queryable) => Promise<T>) =>
    inOneSnapshot(db, async (tx) => {
      if (db.kind === "postgres") await tx.exec(settings.join("; "));
      return await run(tx);
    });
  return {
    extent: reference.extent,
    partials: (plan) =>
      inSnapshot(async (tx) => {
        const site = await rollupSite(tx, plan.siteId);
        const decision = decide(plan, site?.zone);
        const cover = decision.rollup && await rollupCover(tx, plan, site!);
        if (decision.rollup && cover) {
          return rollupPartials(tx, plan, site!, decision.rollup, cover);
        }
        return basePartials(tx, plan, decision.grouping);
      }),
    funnel: (plan) =>
      inSnapshot(async (tx) => {
        const longest = await longestVisitMs(tx, plan.siteId);
        return funnelOf(tx, plan, (visitsPlan, params) =>
          baseSources(visitsPlan, params, { grouping: "visits", longestVisitMs: longest }));
      }),
  };
}

/** The answer of any query from ingest.visits and the rows, grouped as decided. */
export async function basePartials(
  tx: Queryable,
  plan: Plan,
  grouping: Grouping,
): Promise<Partials> {
  const params = new Params();
  const sources = grouping === "rows-alone"
    ? rowsSources(plan, params)
    : baseSources(plan, params, {
      grouping,
      longestVisitMs: await longestVisitMs(tx, plan.siteId),
    });
  return runAggregate(tx, plan, params, { sources, grouping });
}

/** Which way the engine answers a query (for the benchmark and the tests). */
export async function pathOf(
  db: Queryable,
  plan: Plan,
): Promise<"rollups" | "rollups and rows" | "visits" | "rows"> {
  const site = await rollupSite(db, plan.siteId);
  const decision = decide(plan, site?.zone);
  const cover = decision.rollup && await rollupCover(db, plan, site!);
  if (cover) return cover.fromRows.length > 0 ? "rollups and rows" : "rollups";
  return decision.grouping === "rows-alone" ? "rows" : "visits";
}

export type { StatsQuery };
