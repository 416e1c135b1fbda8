import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 12,
  name: "visit sums and returning visitors per attribute",
  // Period sums and visitors by previous day per value of every visit
  // attribute other than channel (source, UTM tags, entry page, country,
  // device, browser, ad link), whose year's breakdown otherwise reads every
  // slice of the year: 8 to 17 s at ten million page views. New tables keyed
  // by attribute ('*' for all visits) and value ('' for none, '=' and the
  // value otherwise). A visitor's previous day of a value is found in the
  // slices themselves, through the index of slices by visitor, not in
  // per-channel visitor days (fifty million rows at that scale for every
  // attribute). The tables of migrations 9 and 11 stay, emptied, for a
  // rollback to the release before this migration: its builder fills them
  // again, and their rules (changes counted per UTC day) hold for them. The
  // tables here are built in the background; while a build is due, queries
  // read the slices. Migration 17 drops all of them.
  sql: `
      truncate ingest.visit_periods, ingest.visit_period_sums, ingest.visitor_channel_days,
               ingest.visitor_channel_returns, ingest.visitor_channel_builds;
      create index visit_slices_visitor on ingest.visit_slices (site_id, visitor_key, bucket);
      create table ingest.visit_attribute_periods (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        changes bigint not null,
        primary key (site_id, period_start, period_end)
      );
      create table ingest.visit_attribute_sums (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        attribute text not null,
        value_key text not null,
        visitors bigint not null,
        pageviews bigint not null,
        events bigint not null,
        leads bigint not null,
        visits bigint not null,
        bounces bigint not null,
        duration_ms bigint not null,
        visit_pageviews bigint not null,
        primary key (site_id, period_start, period_end, attribute, value_key)
      );
      create table ingest.visitor_attribute_returns (
        site_id text not null,
        attribute text not null,
        value_key text not null,
        day timestamptz not null,
        since timestamptz not null,
        visitors bigint not null,
        primary key (site_id, attribute, day, value_key, since)
      );
      create table ingest.visitor_attribute_builds (
        site_id text not null,
        day timestamptz not null,
        changes_through bigint not null,
        primary key (site_id, day)
      );
    `,
};
