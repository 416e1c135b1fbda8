/**
 * The funnel from the stored rows: per visit, the earliest row matching step
 * 1, then the earliest later row (by time, then storage order) matching step
 * 2, and so on, so one row serves one step and a visit reaches step k when
 * it holds rows matching steps 1 to k in that order. Taking the earliest
 * match at each step reaches every step any other choice would. A step's
 * visitors are the visitors of the rows that matched it.
 */
import type { Queryable } from "../../lib/db/mod.ts";
import { and, instant, KIND, Params, type Plan, visitFilters } from "./plan.ts";
import type { Step } from "./funnel_query.ts";
import type { FunnelPlan } from "./service.ts";
import type { StatsQuery } from "./query.ts";

export interface FunnelAnswer {
  /** Per step, in order: the distinct visitors and visits that reached it. */
  steps: { visitors: number; visits: number }[];
}

/** A page pattern as a LIKE pattern: `*` any run, every other character itself. */
export function likePattern(path: string): string {
  return path.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll("*", "%");
}

function stepCondition(step: Step, params: Params): string {
  if ("page" in step) {
    return `kind = ${KIND.pageview} and page like ${params.add(likePattern(step.page))}::text`;
  }
  if ("event" in step) return `kind = ${KIND.event} and name = ${params.add(step.event)}::text`;
  return `kind = ${KIND.lead}`;
}

/**
 * Where a funnel finds the visits its visit: filters keep: the CTEs defining
 * `v` (one row per visit of the range with its attributes) for a plan.
 */
export type VisitsOf = (plan: Plan, params: Params) => string;

/** The rows of the range (funnel_rows) and, with visit: filters, the visits they keep (vf). */
function sources(plan: FunnelPlan, params: Params, visitsOf: VisitsOf): string {
  const { query } = plan;
  if (query.filters.length === 0) return rowsOf(plan, params);
  const stats = { includeBots: query.includeBots, filters: query.filters, dimensions: [] };
  const visits = visitsOf(
    { ...plan, query: stats as unknown as StatsQuery, zone: "UTC", buckets: new Map() },
    params,
  );
  return `${visits},
      vf as (select distinct visit_key from v
              where ${
    and(
      visitFilters(stats as unknown as StatsQuery, params, "", {
        siteId: plan.siteId,
        startMs: plan.startMs,
        endMs: plan.endMs,
        includeBots: query.includeBots,
      }),
    )
  }),
      ${rowsOf(plan, params)}`;
}

/** The CTE funnel_rows: the rows of the range with their visit and visitor keys, name and page. */
function rowsOf(plan: FunnelPlan, params: Params): string {
  const { query } = plan;
  const site = params.add(plan.siteId);
  const from = instant(params, plan.startMs);
  const to = instant(params, plan.endMs);
  const rows = (table: string, alias: string, kind: number, extra: string, humans: string) =>
    `select ${kind} as kind, ${alias}.received_at as at, ${alias}.seq, ${extra},
            coalesce('s' || ${alias}.session_id, 'r' || ${alias}.seq) as visit_key,
            coalesce('v' || ${alias}.visitor_id, 's' || ${alias}.session_id, 'r' || ${alias}.seq)
              as visitor_key
       from ${table} ${alias}
      where ${alias}.site_id = ${site} and ${alias}.received_at >= ${from}
        and ${alias}.received_at < ${to}${query.includeBots ? "" : humans}`;
  return `funnel_rows as (
      ${
    rows(
      "ingest.page_views",
      "p",
      KIND.pageview,
      "null::text as name, coalesce(p.page, ingest.url_path(p.url)) as page",
      " and not p.bot",
    )
  }
      union all
      ${rows("ingest.events", "e", KIND.event, "e.name, null", " and e.bot is not true")}
      union all
      ${rows("ingest.leads", "l", KIND.lead, "null, null", "")}
    )`;
}

export function funnelSql(plan: FunnelPlan, params: Params, visitsOf: VisitsOf): string {
  const { steps } = plan.query;
  const conditions = steps.map((s) => stepCondition(s, params));
  const keep = plan.query.filters.length > 0 ? " join vf using (visit_key)" : "";
  const reached = steps.map((_, i) => {
    const n = i + 1;
    if (i === 0) {
      return `reached_1 as (select distinct on (visit_key) visit_key, visitor_key, at, seq
                              from step_rows where meets_1 order by visit_key, at, seq)`;
    }
    return `reached_${n} as (
      select distinct on (r.visit_key) r.visit_key, r.visitor_key, r.at, r.seq
        from step_rows r join reached_${i} p using (visit_key)
       where r.meets_${n} and (r.at, r.seq) > (p.at, p.seq)
       order by r.visit_key, r.at, r.seq)`;
  });
  return `with ${sources(plan, params, visitsOf)},
    step_rows as (
      select r.visit_key, r.visitor_key, r.at, r.seq,
             ${conditions.map((c, i) => `coalesce(${c}, false) as meets_${i + 1}`).join(", ")}
        from funnel_rows r${keep}
       where ${conditions.map((c) => `(${c})`).join(" or ")}
    ),
    ${reached.join(",\n    ")}
    ${
    steps.map((_, i) =>
      `select ${i + 1} as step, count(distinct visitor_key)::int as visitors,
              count(*)::int as visits from reached_${i + 1}`
    ).join("\nunion all\n")
  }`;
}

/** The funnel from the stored rows, the visits of its filters from `visitsOf`. */
export async function funnelOf(
  db: Queryable,
  plan: FunnelPlan,
  visitsOf: VisitsOf,
): Promise<FunnelAnswer> {
  const params = new Params();
  const rows = await db.query<{ step: number; visitors: number; visits: number }>(
    funnelSql(plan, params, visitsOf),
    params.list,
  );
  const byStep = new Map(rows.map((r) => [Number(r.step), r]));
  return {
    steps: plan.query.steps.map((_, i) => ({
      visitors: Number(byStep.get(i + 1)?.visitors ?? 0),
      visits: Number(byStep.get(i + 1)?.visits ?? 0),
    })),
  };
}
