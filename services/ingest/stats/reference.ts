/**
 * The reference engine: any query computed from the stored rows alone (page
 * views, events, leads), with no table kept for the purpose. It is the plain
 * statement of what every number means, the oracle the fast engine is tested
 * against, and what `deno task bench stats` compares it with.
 *
 * A visit is one session id; a row without one is a visit of its own. The
 * visit's attributes are those of its session's first stored page view (by
 * time, then storage order), bots included and whatever the range; a visit
 * without a page view takes the channel, UTM tags and ad link of its first
 * row.
 */
import type { Queryable } from "../../lib/db/mod.ts";
import { runAggregate } from "./aggregate.ts";
import { FIRST_ROW_ATTRIBUTES, pageOf, visitKeyOf } from "./dimensions.ts";
import type { StatsEngine } from "./service.ts";
import { isPropsDimension } from "./query.ts";
import { funnelOf } from "./funnel.ts";
import { containsAny, instant, iso, KIND, Params, type Partials, type Plan } from "./plan.ts";

/** The CTEs v and r of aggregate.ts, from the stored rows. */
export function referenceSources(plan: Plan, params: Params): string {
  const site = params.add(plan.siteId);
  const from = `${params.add(iso(plan.startMs))}::text::timestamptz`;
  const to = `${params.add(iso(plan.endMs))}::text::timestamptz`;
  const humansOnly = !plan.query.includeBots;
  const range = (alias: string) =>
    `${alias}.site_id = ${site} and ${alias}.received_at >= ${from} and ${alias}.received_at < ${to}`;
  // A visit's first row by kind (page views first), time and storage order, each with the
  // columns the declarations of the visit attributes read (dimensions.ts).
  const rowsOf = (alias: string, sessions: string) =>
    `select ${visitKeyOf(alias)} as visit_key, ${rowColumnsFor(alias)}
       from ${sessions}`;
  return `
    raw as (
      select ${KIND.pageview} as kind, p.received_at as at, p.seq, p.visitor_id, p.session_id,
             p.url as page_url, null::text as name, null::bigint as value, null::text as currency,
             null::json as props
        from ingest.page_views p
       where ${range("p")}${humansOnly ? " and not p.bot" : ""}
      union all
      select ${KIND.event}, e.received_at, e.seq, e.visitor_id, e.session_id, e.url, e.name,
             e.value, e.currency, e.params
        from ingest.events e
       where ${range("e")}${humansOnly ? " and e.bot is not true" : ""}
      union all
      select ${KIND.lead}, l.received_at, l.seq, l.visitor_id, l.session_id, null, null, null,
             null, null
        from ingest.leads l
       where ${range("l")}
    ),
    r as (
      select kind, at, seq, name, value, currency, props,
             coalesce('s' || session_id, 'r' || seq) as visit_key,
             coalesce('v' || visitor_id, 's' || session_id, 'r' || seq) as visitor_key,
             ingest.url_path(page_url) as page
        from raw
    ),
    sessions as (select distinct session_id from raw where session_id is not null),
    first_rows as (
      select distinct on (visit_key) * from (
        ${
    rowsOf(
      "x",
      `ingest.page_views x where x.site_id = ${site}
          and x.session_id in (select session_id from sessions)`,
    ).replace("select ", `select ${KIND.pageview} as kind, `)
  }
        union all
        ${
    otherRowsOf(
      "ingest.events",
      KIND.event,
      `x.site_id = ${site} and x.session_id in (select session_id from sessions)`,
    )
  }
        union all
        ${
    otherRowsOf(
      "ingest.leads",
      KIND.lead,
      `x.site_id = ${site} and x.session_id in (select session_id from sessions)`,
    )
  }
        union all
        ${
    rowsOf("x", `ingest.page_views x where ${range("x")} and x.session_id is null`)
      .replace("select ", `select ${KIND.pageview} as kind, `)
  }
        union all
        ${otherRowsOf("ingest.events", KIND.event, `${range("x")} and x.session_id is null`)}
        union all
        ${otherRowsOf("ingest.leads", KIND.lead, `${range("x")} and x.session_id is null`)}
      ) a
       order by visit_key, kind <> ${KIND.pageview}, at, seq
    ),
    spans as (
      select visit_key, min(at) as first_at, max(at) as last_at,
             count(*) filter (where kind = ${KIND.pageview}) as pv,
             count(*) filter (where kind = ${KIND.event}) as ev,
             (array_agg(page order by at desc, seq desc)
               filter (where kind = ${KIND.pageview}))[1] as exit_page
        from r group by visit_key
    ),
    v as (
      select s.visit_key, s.first_at, s.pv, s.ev,
             round(extract(epoch from s.last_at - s.first_at) * 1000)::bigint as dur_ms,
             s.exit_page, ${FIRST_ROW_ATTRIBUTES.map((a) => `f.${a.column}`).join(", ")}
        from spans s join first_rows f using (visit_key)
    )`;
}

/** The columns a first row gives its visit: its kind, time, seq and each attribute's value. */
function rowColumnsFor(alias: string): string {
  return [
    `${alias}.received_at as at`,
    `${alias}.seq`,
    ...FIRST_ROW_ATTRIBUTES.map((a) => `${a.fromPageView} as ${a.column}`),
  ].join(", ");
}

/** The first-row columns of rows that are not page views (events, leads): the attribution only. */
function otherRowsOf(table: string, kind: number, where: string): string {
  return `select ${kind} as kind, ${visitKeyOf("x")} as visit_key, x.received_at as at, x.seq,
           ${
    FIRST_ROW_ATTRIBUTES.map((a) => `${a.fromOtherRow ?? "null::text"} as ${a.column}`).join(", ")
  }
      from ${table} x where ${where}`;
}

/**
 * The CTE r of aggregate.ts alone, from the stored rows, for a query that
 * reads nothing of visits (aggregate.ts, rowsAlone and no visit metric):
 * the same rows and values as referenceSources gives them, without working
 * out every visit's attributes (which reads every row of the range's
 * sessions). The page and the visitor are worked out only when the query
 * asks about them.
 */
export function rowsSources(plan: Plan, params: Params): string {
  const site = params.add(plan.siteId);
  const from = instant(params, plan.startMs);
  const to = instant(params, plan.endMs);
  const humansOnly = !plan.query.includeBots;
  const range = (alias: string) =>
    `${alias}.site_id = ${site} and ${alias}.received_at >= ${from} and ${alias}.received_at < ${to}`;
  const byPage = [...plan.query.dimensions, ...plan.query.filters.map((f) => f.dimension)]
    .includes("event:page");
  const page = (alias: string) => byPage ? pageOf(alias) : "null::text";
  const byProps = [...plan.query.dimensions, ...plan.query.filters.map((f) => f.dimension)]
    .some(isPropsDimension);
  const byVisitor = plan.query.metrics.some((m) => m === "visitors" || m === "conversion_rate");
  const visitor = (alias: string) =>
    byVisitor
      ? `coalesce('v' || ${alias}.visitor_id, 's' || ${alias}.session_id, 'r' || ${alias}.seq)`
      : "null::text";
  // conversion_rate counts rows that the event: filters leave out, so nothing is left out early.
  const early = plan.query.metrics.includes("conversion_rate")
    ? []
    : plan.query.filters.filter((f) =>
      f.dimension === "event:page" && (f.operator === "is" || f.operator === "contains")
    );
  const pageFilters = (alias: string) =>
    // The stored page, or for a row stored without one its URL (the page is a part of it).
    early.map((f) =>
      ` and (${
        mayMatchPage(
          f.operator as "is" | "contains",
          f.values,
          `coalesce(${alias}.page, ${alias}.url)`,
          params,
        )
      })`
    ).join("");
  return `
    r as (
      select ${KIND.pageview} as kind, p.received_at as at, null::text as name,
             null::bigint as value, null::text as currency, ${visitor("p")} as visitor_key,
             ${page("p")} as page, null::json as props
        from ingest.page_views p
       where ${range("p")}${humansOnly ? " and not p.bot" : ""}${pageFilters("p")}
      union all
      select ${KIND.event}, e.received_at, e.name, e.value, e.currency, ${visitor("e")},
             ${page("e")}, ${byProps ? "e.params" : "null"}
        from ingest.events e
       where ${range("e")}${humansOnly ? " and e.bot is not true" : ""}${pageFilters("e")}
      union all
      select ${KIND.lead}, l.received_at, null, null, null, ${visitor("l")}, null, null
        from ingest.leads l
       where ${range("l")}${early.length ? " and false" : ""}
    )`;
}

/**
 * A condition on a row's URL or stored page (`column`) that holds whenever
 * its page (ingest.url_path(url)) is one of `values` ("is") or contains one
 * of them ("contains", ignoring case), so rows that cannot match are left out
 * where they are read: for rows stored without a page, before it is worked
 * out (a regular expression, about 3 µs a row). The page is a part of the
 * URL, or "/" when that part is empty; lower() works character by
 * character, so the lowercase page is a part of the lowercase URL. The exact
 * filter still applies afterwards.
 */
export function mayMatchPage(
  operator: "is" | "contains",
  values: readonly string[],
  column: string,
  params: Params,
): string {
  // "/" (and, for contains, "") may match a page of any URL: then every row may match.
  if (values.some((v) => v === "/" || (operator === "contains" && v === ""))) return "true";
  // One plain test per value: a set-returning unnest per row cost more than the test itself.
  const tests = operator === "contains"
    ? containsAny(column, values, params)
    : values.map((v) => `strpos(${column}, ${params.add(v)}::text) > 0`).join(" or ");
  return tests || "false";
}

export function referencePartials(db: Queryable, plan: Plan): Promise<Partials> {
  const params = new Params();
  return runAggregate(db, plan, params, {
    sources: referenceSources(plan, params),
    grouping: "rows",
  });
}

/** The reference engine: everything from the stored rows. */
export function referenceEngine(db: Queryable): StatsEngine {
  return {
    async extent(siteId, range, includeBots) {
      const [row] = await db.query<{ first: Date | string | null; last: Date | string | null }>(
        `select min(f) as first, max(l) as last from (
           select min(received_at) as f, max(received_at) as l from ingest.page_views
            where site_id = $1 and received_at >= $2::text::timestamptz and received_at < $3::text::timestamptz
              and ($4 or not bot)
           union all
           select min(received_at), max(received_at) from ingest.events
            where site_id = $1 and received_at >= $2::text::timestamptz and received_at < $3::text::timestamptz
              and ($4 or bot is not true)
           union all
           select min(received_at), max(received_at) from ingest.leads
            where site_id = $1 and received_at >= $2::text::timestamptz and received_at < $3::text::timestamptz
         ) as x`,
        [siteId, bound(range.from, "-infinity"), bound(range.to, "infinity"), includeBots],
      );
      if (!row || row.first === null || row.last === null) return undefined;
      return { first: new Date(row.first).getTime(), last: new Date(row.last).getTime() };
    },
    partials: (plan) => referencePartials(db, plan),
    funnel: (plan) => funnelOf(db, plan, referenceSources),
  };
}

/** An instant as a SQL parameter, or an infinity when there is no bound. */
export const bound = (ms: number | undefined, infinity: "-infinity" | "infinity") =>
  ms === undefined ? infinity : iso(ms);
