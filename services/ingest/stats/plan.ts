/**
 * A query ready to run: the site, its zone, the range as instants, the
 * buckets of each time dimension, and the SQL pieces every engine shares
 * (parameters, filters, how the partial sums come back). An engine reads the
 * stored data its own way and answers the same Partials, which finish.ts
 * turns into the answer.
 */
import type { Param } from "../../lib/db/mod.ts";
import type { Buckets } from "./calendar.ts";
import { KIND, pageOf, visitColumn, visitKeyOf } from "./dimensions.ts";
import {
  type DimensionName,
  type EventDimension,
  type Filter,
  isEventDimension,
  isVisitDimension,
  propertyKeyOf,
  SEGMENT,
  type StatsQuery,
  type TimeDimension,
} from "./query.ts";

export interface Plan {
  siteId: string;
  query: StatsQuery;
  /** The zone days and hours are local to. */
  zone: string;
  /** The range: [startMs, endMs). */
  startMs: number;
  endMs: number;
  /** Buckets of each time dimension of the query, over the part of the range that holds data. */
  buckets: Map<TimeDimension, Buckets>;
}

/** The sums an engine answers for one group (or for all rows, the totals). */
export interface Sums {
  pageviews: number;
  events: number;
  leads: number;
  visitors: number;
  visits: number;
  /** Visits with exactly one page view and no event. */
  bounces: number;
  /** Sum over visits of first-to-last row, in milliseconds. */
  durationMs: number;
  /** Sum over visits of their page views. */
  visitPageviews: number;
  /** conversion_rate: visitors counted without the event: filters, and those of them who sent a matching event. */
  reached: number;
  converted: number;
  /** Revenue in minor units by currency. */
  revenue: Map<string, bigint>;
}

export const emptySums = (): Sums => ({
  pageviews: 0,
  events: 0,
  leads: 0,
  visitors: 0,
  visits: 0,
  bounces: 0,
  durationMs: 0,
  visitPageviews: 0,
  reached: 0,
  converted: 0,
  revenue: new Map(),
});

export interface Group {
  /** One value per query dimension (time dimensions as labels); null where the data does not know. */
  dims: (string | null)[];
  sums: Sums;
}

export interface Partials {
  /** Every combination of the dimensions that has data. */
  groups: Group[];
  /** The sums over all rows (no dimensions); zeros when levels() leaves them out. */
  all: Sums;
}

/**
 * What an engine's statement computes: the sums over all rows ("") and per
 * group ("g"). With dimensions, the sums over all rows are asked only for
 * totals: they cost a distinct count of the whole range's visitors and
 * visits, often as much as the groups themselves.
 */
export function levels(query: StatsQuery): ("" | "g")[] {
  if (query.dimensions.length === 0) return [""];
  return query.includeTotals ? ["", "g"] : ["g"];
}

/** Positional SQL parameters. */
export class Params {
  readonly list: Param[] = [];
  add(value: Param): string {
    this.list.push(value);
    return `$${this.list.length}`;
  }
}

/** A Postgres array literal of text values and nulls. */
export function textArray(values: readonly (string | null)[]): string {
  const quoted = values.map((v) =>
    v === null ? "NULL" : `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
  );
  return `{${quoted.join(",")}}`;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An instant as a typed parameter: parsed once when the statement is bound,
 * so the planner sees a constant. (`$1::text::timestamptz` is a stable cast
 * that a scan's filter evaluates again on every row: 150 ms more on 107,149
 * counters, measured 2026-11-23.)
 */
export const instant = (params: Params, ms: number) => `${params.add(iso(ms))}::timestamptz`;

/**
 * The column of the rows relation (alias.) that holds an event: dimension;
 * an event property's value is read from the event's parameters as text.
 */
export function eventColumn(d: EventDimension, params: Params, alias = ""): string {
  if (d === "event:name") return `${alias}name`;
  if (d === "event:page") return `${alias}page`;
  return `(${alias}props ->> ${params.add(propertyKeyOf(d))}::text)`;
}

export { KIND };

/**
 * A filter as a SQL condition on `column`. A null never matches a value, so
 * is and contains fail on it and is_not and contains_not hold; contains is a
 * case-insensitive substring. Under an event:name filter only custom events
 * match, whatever the operator.
 */
export function filterCondition(filter: Filter, column: string, params: Params): string {
  const matches = filter.operator === "is" || filter.operator === "is_not"
    ? `coalesce(${column} = any(${params.add(textArray(filter.values))}::text::text[]), false)`
    : `coalesce(${containsAny(column, filter.values, params)}, false)`;
  const positive = filter.operator === "is" || filter.operator === "contains";
  const condition = positive ? matches : `not ${matches}`;
  return filter.dimension === "event:name" ? `(kind = ${KIND.event} and ${condition})` : condition;
}

/**
 * A text column contains one of `values`, ignoring case: one plain test per
 * value (a subquery over the values' unnest ran per row and cost about a
 * quarter of an event:page query over a month of ten million page views).
 * Empty for no values.
 */
export function containsAny(column: string, values: readonly string[], params: Params): string {
  return values.map((v) => `strpos(lower(${column}), lower(${params.add(v)}::text)) > 0`)
    .join(" or ");
}

/** Where a segment filter's event: filters look for rows: the site, the range, bots or not. */
export interface SegmentScope {
  siteId: string;
  startMs: number;
  endMs: number;
  includeBots: boolean;
}

/**
 * The visit keys of the rows in the scope that pass every one of `filters`
 * (event: filters, as the query's own conditions judge a row).
 */
function visitsWithRows(filters: readonly Filter[], scope: SegmentScope, params: Params): string {
  const site = params.add(scope.siteId);
  const from = instant(params, scope.startMs);
  const to = instant(params, scope.endMs);
  const humans = !scope.includeBots;
  const rows = (table: string, kind: number, columns: string, human: string) =>
    `select ${kind} as kind, ${visitKeyOf("y")} as visit_key, ${columns}
       from ${table} y
      where y.site_id = ${site} and y.received_at >= ${from} and y.received_at < ${to}
        ${humans ? `and ${human}` : ""}`;
  const conditions = filters.map((f) =>
    filterCondition(f, eventColumn(f.dimension as EventDimension, params, "x."), params)
  );
  return `select x.visit_key from (
      ${
    rows(
      "ingest.page_views",
      KIND.pageview,
      `null::text as name, ${pageOf("y")} as page, null::json as props`,
      "not y.bot",
    )
  }
      union all ${
    rows("ingest.events", KIND.event, `y.name, ${pageOf("y")}, y.params`, "y.bot is not true")
  }
      union all ${rows("ingest.leads", KIND.lead, "null, null, null", "true")}) x
    where ${and(conditions)}`;
}

/**
 * A segment filter as a condition on a visit (alias. its columns, the
 * visit's key in `visit_key`): the visit matches every filter of one of the
 * segments (is) or of none (is_not). Visit: filters are the query's own
 * conditions on the visit; a segment's event: filters hold for a visit with
 * a row in the range that passes them all.
 */
export function segmentCondition(
  filter: Filter,
  params: Params,
  options: { alias: string; scope: SegmentScope },
): string {
  const { alias, scope } = options;
  const matches = (filter.segments ?? []).map((segment) => {
    const visits = segment.filter((f) => isVisitDimension(f.dimension)).map((f) =>
      filterCondition(f, alias + visitColumn(f.dimension), params)
    );
    const events = segment.filter((f) => isEventDimension(f.dimension));
    if (events.length > 0) {
      visits.push(`${alias}visit_key in (${visitsWithRows(events, scope, params)})`);
    }
    return and(visits);
  });
  const any = matches.length ? matches.map((m) => `(${m})`).join(" or ") : "false";
  return filter.operator === "is_not" ? `not (${any})` : any;
}

/**
 * The conditions on a visit of the query's visit: filters, and of its
 * segment filters (which need the scope their event: filters look in).
 */
export function visitFilters(
  query: StatsQuery,
  params: Params,
  alias = "",
  scope?: SegmentScope,
): string[] {
  return query.filters.flatMap((f) => {
    if (isVisitDimension(f.dimension)) {
      return [filterCondition(f, alias + visitColumn(f.dimension), params)];
    }
    if (f.dimension !== SEGMENT) return [];
    if (!scope) throw new Error("a segment filter needs the scope of its rows");
    return [segmentCondition(f, params, { alias: alias || "v.", scope })];
  });
}

export function eventFilters(query: StatsQuery, params: Params, alias = ""): string[] {
  return query.filters.filter((f) => isEventDimension(f.dimension)).map((f) =>
    filterCondition(f, eventColumn(f.dimension as EventDimension, params, alias), params)
  );
}

export const and = (conditions: string[]) =>
  conditions.length ? conditions.map((c) => `(${c})`).join(" and ") : "true";

/**
 * The SQL array parameters that put an instant in its bucket: starts, and
 * label ids. Each is a scalar subquery, computed once per statement: a text
 * to timestamptz cast depends on the session's zone setting, so Postgres
 * would otherwise parse the array again for every row.
 */
export function bucketParams(buckets: Buckets, params: Params): { starts: string; ids: string } {
  return {
    starts: `(select ${params.add(`{${buckets.starts.map(iso).join(",")}}`)}::text::timestamptz[])`,
    ids: `(select ${params.add(`{${buckets.labelIds.join(",")}}`)}::text::int[])`,
  };
}

/** The label id of the bucket an instant column falls in. */
export const bucketOf = (at: string, b: { starts: string; ids: string }) =>
  `(${b.ids})[width_bucket(${at}, ${b.starts})]`;

export type { DimensionName };
