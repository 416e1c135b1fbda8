/**
 * The grouping the row-level engines share. Given `r`, the rows in the range
 * (kind, time, visit and visitor keys, event name, page, value, currency,
 * properties), and `v`, one row per visit with a row in the range (its key,
 * visitor key, the time of its first row in the range, its page views,
 * events, leads and duration there, and its visit: attributes), it answers
 * the partial sums of every group, and of all rows, in one statement.
 *
 * The rules it encodes: visit: filters keep or drop whole visits; event:
 * filters select rows, and visits and visitors are those of the selected
 * rows; rows count in the bucket of their own time, a visit in the bucket of
 * its first row in the range, with its bounce, duration and page views taken
 * over all its rows there; conversion_rate counts the visitors of the rows
 * without the event: filters, and those of them who sent an event matching
 * every event:name filter.
 *
 * Three ways to group (Grouping, chosen by decide.ts): the rows joined to
 * their visits; the rows alone, for a query that reads nothing of visits; or
 * the visits alone, for one that needs no row's own time, name or page (each
 * visit then brings its counts, and one line per visitor key it has: `extra`
 * lines beyond the first count only as visitors).
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
  KIND,
  levels,
  type Params,
  type Partials,
  type Plan,
  type Sums,
  visitFilters,
} from "./plan.ts";
import {
  type EventDimension,
  isPropsDimension,
  isTimeDimension,
  isVisitDimension,
} from "./query.ts";
import { visitColumn } from "./dimensions.ts";
import { type Grouping, VISIT_METRICS } from "./decide.ts";

/** The answer's columns, each named for what it holds; a part fills those it computes. */
const COLUMNS = [
  "part",
  "total",
  "dim_1",
  "dim_2",
  "dim_3",
  "pageviews",
  "events",
  "leads",
  "visitors",
  "currency",
  "revenue",
  "visits",
  "bounces",
  "duration_ms",
  "visit_pageviews",
  "reached",
  "converted",
] as const;
type Column = typeof COLUMNS[number];

export type PartRow = Record<Column, string | null>;

function partSelect(values: Partial<Record<Column, string>>): string {
  return COLUMNS.map((c) => `${values[c] ?? "null"}::text as ${c}`).join(", ");
}

/** The statement over the relations `sources` defines (a list of CTEs using `params`). */
export function aggregateSql(
  plan: Plan,
  params: Params,
  sources: string,
  grouping: Grouping,
): string {
  const { query } = plan;
  const withVisits = grouping !== "rows-alone";
  const rowCols: string[] = [];
  const visitCols: string[] = [];
  const selects: string[] = [];
  query.dimensions.forEach((d, i) => {
    if (isTimeDimension(d)) {
      const b = bucketParams(plan.buckets.get(d)!, params);
      selects.push(`${bucketOf("r.at", b)} as row_bucket_${i}`);
      if (withVisits) selects.push(`${bucketOf("vf.first_at", b)} as visit_bucket_${i}`);
      rowCols.push(`row_bucket_${i}`);
      visitCols.push(`visit_bucket_${i}`);
    } else {
      const column = isVisitDimension(d)
        ? `vf.${visitColumn(d)}`
        : eventColumn(d as EventDimension, params, "r.");
      selects.push(`${column} as value_${i}`);
      rowCols.push(`value_${i}`);
      visitCols.push(`value_${i}`);
    }
  });
  const dims = (cols: string[]) => ({
    dim_1: cols[0] ?? "null",
    dim_2: cols[1] ?? "null",
    dim_3: cols[2] ?? "null",
  });
  const groupBy = (cols: string[], extra: string[] = []) =>
    [...cols, ...extra].length ? `group by ${[...cols, ...extra].join(", ")}` : "";
  const metrics = query.metrics;
  const revenue = metrics.includes("revenue");
  const visits = metrics.some((m) => VISIT_METRICS.includes(m));
  const conversion = metrics.includes("conversion_rate");
  const converts = () =>
    and(
      query.filters.filter((f) => f.dimension === "event:name")
        .map((f) => filterCondition(f, "name", params)),
    );

  const parts: string[] = [];
  for (const level of levels(query)) {
    const grouped = level === "g";
    const total = grouped ? "false" : "true";
    if (grouping === "visits") {
      const cols = grouped ? visitCols : [];
      parts.push(`select ${
        partSelect({
          part: "'visits'",
          total,
          ...dims(cols),
          pageviews: "sum(pv) filter (where not extra)",
          events: "sum(ev) filter (where not extra)",
          leads: "sum(ld) filter (where not extra)",
          visitors: "count(distinct visitor_key)",
          visits: "count(*) filter (where not extra)",
          bounces: "count(*) filter (where pv = 1 and ev = 0 and not extra)",
          duration_ms: "sum(dur_ms) filter (where not extra)",
          visit_pageviews: "sum(pv) filter (where not extra)",
        })
      } from vs ${groupBy(cols)}`);
      continue;
    }
    const rows = grouped ? rowCols : [];
    parts.push(`select ${
      partSelect({
        part: "'rows'",
        total,
        ...dims(rows),
        pageviews: `count(*) filter (where kind = ${KIND.pageview})`,
        events: `count(*) filter (where kind = ${KIND.event})`,
        leads: `count(*) filter (where kind = ${KIND.lead})`,
        visitors: metrics.includes("visitors") ? "count(distinct visitor_key)" : undefined,
      })
    } from sel ${groupBy(rows)}`);
    if (revenue) {
      parts.push(`select ${
        partSelect({
          part: "'revenue'",
          total,
          ...dims(rows),
          currency: "currency",
          revenue: "sum(value)",
        })
      } from sel where kind = ${KIND.event} and value is not null and currency is not null
        ${groupBy(rows, ["currency"])}`);
    }
    if (visits) {
      const cols = grouped ? visitCols : [];
      const distinctCols = ["visit_key", ...cols, "pv", "ev", "dur_ms"].join(", ");
      parts.push(`select ${
        partSelect({
          part: "'visits'",
          total,
          ...dims(cols),
          visits: "count(*)",
          bounces: "count(*) filter (where pv = 1 and ev = 0)",
          duration_ms: "sum(dur_ms)",
          visit_pageviews: "sum(pv)",
        })
      } from (select distinct ${distinctCols} from sel) as sv ${groupBy(cols)}`);
    }
    if (conversion) {
      parts.push(`select ${
        partSelect({
          part: "'conversion'",
          total,
          ...dims(rows),
          reached: "count(distinct visitor_key)",
          converted:
            `count(distinct visitor_key) filter (where kind = ${KIND.event} and ${converts()})`,
        })
      } from fr ${groupBy(rows)}`);
    }
  }
  const byProps = [...query.dimensions, ...query.filters.map((f) => f.dimension)].some(
    isPropsDimension,
  );
  const more = (byProps ? ", r.props" : "") + (selects.length ? ", " + selects.join(", ") : "");
  const selected = `sel as (select * from fr where ${and(eventFilters(query, params))})`;
  const scope = {
    siteId: plan.siteId,
    startMs: plan.startMs,
    endMs: plan.endMs,
    includeBots: query.includeBots,
  };
  const filteredVisits = `vf as (select * from v where ${
    and(visitFilters(query, params, "", scope))
  })`;
  if (grouping === "visits") {
    return `with ${sources}, ${filteredVisits},
      vs as (select vf.*${selects.length ? ", " + selects.join(", ") : ""} from vf)
      ${parts.join("\nunion all\n")}`;
  }
  if (grouping === "rows-alone") {
    return `with ${sources},
    fr as (select r.kind, r.at, r.visitor_key, r.name, r.page, r.value, r.currency${more} from r),
    ${selected}
  ${parts.join("\nunion all\n")}`;
  }
  return `with ${sources}, ${filteredVisits},
    fr as (
      select r.kind, r.at, r.visit_key, r.visitor_key, r.name, r.page, r.value, r.currency,
             vf.pv, vf.ev, vf.dur_ms${more}
        from r join vf using (visit_key)),
    ${selected}
  ${parts.join("\nunion all\n")}`;
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
    const raw = [row.dim_1, row.dim_2, row.dim_3][i];
    const timeLabels = labels[i];
    return timeLabels && raw !== null ? timeLabels[Number(raw)] : raw;
  };
  const sumsOf = (row: PartRow): Sums => {
    if (row.total === "true") return all;
    const dims = query.dimensions.map((_, i) => valueOf(row, i));
    const key = JSON.stringify(dims);
    let group = groups.get(key);
    if (!group) groups.set(key, group = { dims, sums: emptySums() });
    return group.sums;
  };
  for (const row of rows) {
    const sums = sumsOf(row);
    if (row.part === "rows") {
      sums.pageviews += num(row.pageviews);
      sums.events += num(row.events);
      sums.leads += num(row.leads);
      sums.visitors += num(row.visitors);
    } else if (row.part === "revenue") {
      sums.revenue.set(
        row.currency!,
        (sums.revenue.get(row.currency!) ?? 0n) + BigInt(row.revenue ?? "0"),
      );
    } else if (row.part === "visits") {
      sums.visits += num(row.visits);
      sums.bounces += num(row.bounces);
      sums.durationMs += num(row.duration_ms);
      sums.visitPageviews += num(row.visit_pageviews);
      sums.pageviews += num(row.pageviews);
      sums.events += num(row.events);
      sums.leads += num(row.leads);
      sums.visitors += num(row.visitors);
    } else if (row.part === "conversion") {
      sums.reached += num(row.reached);
      sums.converted += num(row.converted);
    }
  }
  return { groups: [...groups.values()], all };
}

/** Runs the statement and reads its answer. */
export async function runAggregate(
  db: Queryable,
  plan: Plan,
  params: Params,
  options: { sources: string; grouping: Grouping },
): Promise<Partials> {
  const rows = await db.query<PartRow>(
    aggregateSql(plan, params, options.sources, options.grouping),
    params.list,
  );
  return readParts(plan, rows);
}
