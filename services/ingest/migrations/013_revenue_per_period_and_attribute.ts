import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 13,
  name: "revenue per local period and visit attribute",
  // The revenue per period, attribute value and currency of the valued
  // events whose rows are not bots, in the period sums and built with the
  // other sums in the same statement, for the dashboard's Ad channels report
  // (revenue by visit:ad_link), which otherwise reads every valued event of
  // its range joined to its slice. The sums built without it are emptied, to
  // be built again with it. Migration 17 drops the period sums.
  sql: `
      truncate ingest.visit_attribute_periods, ingest.visit_attribute_sums;
      create table ingest.visit_attribute_revenue (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        attribute text not null,
        value_key text not null,
        currency text not null,
        revenue numeric not null,
        primary key (site_id, period_start, period_end, attribute, value_key, currency)
      );
    `,
};
