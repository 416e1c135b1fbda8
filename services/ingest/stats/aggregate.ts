/**
 * The grouping every row-level engine shares: given two relations, `v` (one
 * row per visit with a row in the range: its key, its first row's time in
 * the range, its page views, events and duration there, and its visit:
 * attributes) and `r` (the rows in the range: kind, time, visit and visitor
 * keys, event name, page, value, currency), it answers the partial sums of
 * every group and of all rows in one statement.
 *
 * The rules it encodes: visit: filters keep or drop whole visits; event:
 * filters select rows, and visits and visitors are those of the selected
 * rows; rows count in the bucket of their own time, a visit in the bucket of
 * its first row in the range, with its bounce, duration and page views taken
 * over all its rows there; conversion_rate counts the visitors of the rows
 * without the event: filters, and those of them who sent an event matching
 * every event:name filter.
 *
 * A query with no visit: dimension, filter or visit metric needs no visit:
 * then `r` alone (without visit_key) answers it (withVisits false).
 */
import type { Queryable } from "../../lib/db/mod.ts";
import {
  and,
  bucketOf,
  bucketParams,
  emptySums,
  eventColumn,
  eventFilters,
  filterCondition,
  type Group,
  isTimeDimension,
  isVisitDimension,
  KIND,
  levels,
  type Params,
  type Partials,
  type Plan,
  type Sums,
  VISIT_COLUMN,
  visitFilters,
} from "./plan.ts";
import {
  type EventDimension,
  isPropsDimension,
  type MetricName,
  type VisitDimension,
} from "./query.ts";

const VISIT_METRICS: MetricName[] = ["visits", "bounce_rate", "visit_duration", "views_per_visit"];

export interface Needs {
  visitors: boolean;
  revenue: boolean;
  visits: boolean;
  conversion: boolean;
}

export function needsOf(metrics: readonly MetricName[]): Needs {
  return {
    visitors: metrics.includes("visitors"),
    revenue: metrics.includes("revenue"),
    visits: metrics.some((m) => VISIT_METRICS.includes(m)),
    conversion: metrics.includes("conversion_rate"),
  };
}

/** One line of the answer: which part, the group's values, four numbers, a currency. */
export interface PartRow {
  part: string;
  d0: string | null;
  d1: string | null;
  d2: string | null;
  n1: string | null;
  n2: string | null;
  n3: string | null;
  n4: string | null;
  cur: string | null;
  [column: string]: unknown;
}

/**
 * The statement over relations v and r (defined by `sources`, a list of CTEs
 * using `params`).
 */
export function aggregateSql(
  plan: Plan,
  params: Params,
  sources: string,
  withVisits = true,
): string {
  const { query } = plan;
  const needs = needsOf(query.metrics);
  if (!withVisits && (needs.visits || !rowsAlone(query))) {
    throw new Error("a query about visits needs the visits relation");
  }
  const rowCols: string[] = [];
  const visitCols: string[] = [];
  const selects: string[] = [];
  query.dimensions.forEach((d, i) => {
    if (isTimeDimension(d)) {
      const b = bucketParams(plan.buckets.get(d)!, params);
      selects.push(`${bucketOf("r.at", b)} as t${i}`);
      if (withVisits) selects.push(`${bucketOf("vf.first_at", b)} as vt${i}`);
      rowCols.push(`t${i}`);
      visitCols.push(`vt${i}`);
    } else {
      const column = isVisitDimension(d)
        ? `vf.${VISIT_COLUMN[d as VisitDimension]}`
        : eventColumn(d as EventDimension, params, "r.");
      selects.push(`${column} as g${i}`);
      rowCols.push(`g${i}`);
      visitCols.push(`g${i}`);
    }
  });
  const selected = and(eventFilters(query, params));
  const converts = () =>
    and(
      query.filters.filter((f) => f.dimension === "event:name")
        .map((f) => filterCondition(f, "name", params)),
    );
  const dims = (cols: string[]) =>
    [0, 1, 2].map((i) => `${i < cols.length ? `${cols[i]}::text` : "null::text"} as d${i}`)
      .join(", ");
  const groupBy = (cols: string[], extra: string[] = []) =>
    [...cols, ...extra].length ? `group by ${[...cols, ...extra].join(", ")}` : "";

  const parts: string[] = [];
  for (const level of levels(query)) {
    const rows = level === "g" ? rowCols : [];
    const visits = level === "g" ? visitCols : [];
    const tag = (p: string) => (level === "g" ? p : p.toUpperCase());
    parts.push(
      `select '${tag("r")}' as part, ${dims(rows)},
         (count(*) filter (where kind = ${KIND.pageview}))::text as n1,
         (count(*) filter (where kind = ${KIND.event}))::text as n2,
         (count(*) filter (where kind = ${KIND.lead}))::text as n3,
         ${needs.visitors ? "(count(distinct visitor_key))::text" : "null::text"} as n4,
         null::text as cur
       from sel ${groupBy(rows)}`,
    );
    if (needs.revenue) {
      parts.push(
        `select '${tag("m")}', ${dims(rows)}, (sum(value))::text, null, null, null, currency
           from sel where kind = ${KIND.event} and value is not null and currency is not null
           ${groupBy(rows, ["currency"])}`,
      );
    }
    if (needs.visits) {
      const distinctCols = ["visit_key", ...visits, "pv", "ev", "dur_ms"].join(", ");
      parts.push(
        `select '${tag("v")}', ${dims(visits)}, (count(*))::text,
           (count(*) filter (where pv = 1 and ev = 0))::text, (sum(dur_ms))::text, (sum(pv))::text,
           null
           from (select distinct ${distinctCols} from sel) as sv ${groupBy(visits)}`,
      );
    }
    if (needs.conversion) {
      parts.push(
        `select '${tag("c")}', ${dims(rows)}, (count(distinct visitor_key))::text,
           (count(distinct visitor_key) filter (where kind = ${KIND.event} and ${converts()}))::text,
           null, null, null
           from fr ${groupBy(rows)}`,
      );
    }
  }
  const selectedCte = `sel as (select * from fr where ${selected})`;
  const byProps = [...query.dimensions, ...query.filters.map((f) => f.dimension)].some(
    isPropsDimension,
  );
  const more = (byProps ? ", r.props" : "") + (selects.length ? ", " + selects.join(", ") : "");
  if (!withVisits) {
    return `with ${sources},
    fr as (select r.kind, r.at, r.visitor_key, r.name, r.page, r.value, r.currency${more} from r),
    ${selectedCte}
  ${parts.join("\nunion all\n")}`;
  }
  return `with ${sources},
    vf as (select * from v where ${and(visitFilters(query, params))}),
    fr as (
      select r.kind, r.at, r.visit_key, r.visitor_key, r.name, r.page, r.value, r.currency,
             vf.pv, vf.ev, vf.dur_ms${more}
        from r join vf using (visit_key)),
    ${selectedCte}
  ${parts.join("\nunion all\n")}`;
}

/**
 * Whether a query reads nothing of visits: no visit: dimension or filter (its
 * metrics may still be visit metrics). Such a query's rows need no visit's
 * attributes, and with no visit metric, no visit at all (rowsSources).
 */
export function rowsAlone(query: Plan["query"]): boolean {
  return !query.dimensions.some(isVisitDimension) &&
    !query.filters.some((f) => isVisitDimension(f.dimension));
}

const num = (text: string | null) => (text === null ? 0 : Number(text));

/**
 * The partial sums from the answer's lines. Groups are those with a selected
 * row, and those with a counted visit when a visit metric is asked for.
 */
export function readParts(plan: Plan, rows: PartRow[]): Partials {
  const { query } = plan;
  const labels = query.dimensions.map((d) =>
    isTimeDimension(d) ? plan.buckets.get(d)!.labels : undefined
  );
  const groups = new Map<string, Group>();
  const all = emptySums();
  const valueOf = (row: PartRow, i: number): string | null => {
    const raw = [row.d0, row.d1, row.d2][i];
    const timeLabels = labels[i];
    return timeLabels && raw !== null ? timeLabels[Number(raw)] : raw;
  };
  const sumsOf = (row: PartRow): Sums => {
    if (row.part === row.part.toUpperCase()) return all;
    const dims = query.dimensions.map((_, i) => valueOf(row, i));
    const key = JSON.stringify(dims);
    let group = groups.get(key);
    if (!group) groups.set(key, group = { dims, sums: emptySums() });
    return group.sums;
  };
  for (const row of rows) {
    const part = row.part.toLowerCase();
    const sums = sumsOf(row);
    if (part === "r") {
      sums.pageviews += num(row.n1);
      sums.events += num(row.n2);
      sums.leads += num(row.n3);
      sums.visitors += num(row.n4);
    } else if (part === "m") {
      sums.revenue.set(row.cur!, (sums.revenue.get(row.cur!) ?? 0n) + BigInt(row.n1 ?? "0"));
    } else if (part === "v") {
      sums.visits += num(row.n1);
      sums.bounces += num(row.n2);
      sums.durationMs += num(row.n3);
      sums.visitPageviews += num(row.n4);
    } else if (part === "c") {
      sums.reached += num(row.n1);
      sums.converted += num(row.n2);
    }
  }
  return { groups: [...groups.values()], all };
}

/** Runs the statement and reads its answer. */
export async function runAggregate(
  db: Queryable,
  plan: Plan,
  params: Params,
  sources: string,
  withVisits = true,
): Promise<Partials> {
  const rows = await db.query<PartRow>(
    aggregateSql(plan, params, sources, withVisits),
    params.list,
  );
  return readParts(plan, rows);
}
