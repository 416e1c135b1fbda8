/**
 * The one declaration of what the reports can break visits down by. Each
 * visit attribute names its dimension, its column in ingest.visits and the
 * SQL that reads it from a visit's first row (alias `x`, a stored page view;
 * other rows carry only the attribution). The writer's upkeep of
 * ingest.visits, the reference engine, the fast engine and the rollups all
 * take their columns from here, so a new attribute is its name in the
 * vocabulary (services/lib/stats/vocabulary.ts), a declaration here, a
 * column (a migration) and its enum value in proto/crm/stats/v1
 * (vocabulary_test.ts holds the four one to one).
 *
 * exit_page is the one attribute a visit's rows keep changing: the path of
 * its last page view (the writer keeps the latest), and within a date range
 * the last page view in it.
 */

import type { VisitAttributeName, VisitDimension } from "../../lib/stats/vocabulary.ts";

/** Where a visit came from: every row of a session carries it (rows.ts, attribution). */
export const ATTRIBUTION = [
  "channel",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
  "ad_link",
] as const satisfies readonly VisitAttributeName[];

export interface VisitAttribute {
  dimension: VisitDimension;
  column: string;
  /** SQL of the value from the visit's first page view (alias x); undefined: from its last. */
  fromPageView?: string;
  /** SQL of the value from a first row that is not a page view (alias x): the attribution only. */
  fromOtherRow?: string;
}

const attribution = (column: VisitAttributeName): VisitAttribute => ({
  dimension: `visit:${column}`,
  column,
  fromPageView: `x.${column}`,
  fromOtherRow: `x.${column}`,
});

const fromPageView = (column: VisitAttributeName, sql: string): VisitAttribute => ({
  dimension: `visit:${column}`,
  column,
  fromPageView: sql,
});

export const VISIT_ATTRIBUTES: readonly VisitAttribute[] = [
  attribution("channel"),
  {
    dimension: "visit:source",
    column: "source",
    fromPageView: "coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url))",
    fromOtherRow: "x.utm_source",
  },
  fromPageView(
    "referrer",
    "case when ingest.referrer_source(x.referrer, x.url) is not null then x.referrer end",
  ),
  ...ATTRIBUTION.slice(1).map(attribution),
  fromPageView("entry_page", "coalesce(x.page, ingest.url_path(x.url))"),
  { dimension: "visit:exit_page", column: "exit_page" },
  fromPageView("screen", "ingest.screen_class(x.screen)"),
  fromPageView("country", "x.country"),
  fromPageView("device", "x.device"),
  fromPageView("browser", "x.browser"),
  fromPageView("os", "x.os"),
  fromPageView(
    "visitor_type",
    "case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end",
  ),
];

/** The attributes taken from a visit's first row (every one but exit_page). */
export const FIRST_ROW_ATTRIBUTES = VISIT_ATTRIBUTES.filter((a) => a.fromPageView);

const byDimension = new Map(VISIT_ATTRIBUTES.map((a) => [a.dimension, a]));

/** The ingest.visits column of a visit: dimension. */
export function visitColumn(dimension: string): string {
  const attribute = byDimension.get(dimension as VisitDimension);
  if (!attribute) throw new Error(`no visit attribute ${dimension}`);
  return attribute.column;
}

/** Row kinds as the engines write them. */
export const KIND = { pageview: 1, event: 2, lead: 3 } as const;

/** A row's visit: its session, or the row alone. */
export const visitKeyOf = (x: string) => `coalesce('s' || ${x}.session_id, 'r' || ${x}.seq)`;
/** A row's visitor: its visitor id, else its session, else the row alone. */
export const visitorKeyOf = (x: string) =>
  `coalesce('v' || ${x}.visitor_id, 's' || ${x}.session_id, 'r' || ${x}.seq)`;
/** A stored page view's or event's page (event:page), for rows stored before it was kept. */
export const pageOf = (x: string) => `coalesce(${x}.page, ingest.url_path(${x}.url))`;
