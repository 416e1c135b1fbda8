import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 9,
  name: "visit sums per local period",
  // Visit sums per local period (day, week, month) for the Traffic report,
  // which otherwise counts distinct visitors and groups visits of every slice
  // in range: seconds at ten million page views. They are built in the
  // background for periods that have ended, each with the number of changes
  // made to the UTC days it covers at the time; a query uses a period's sums
  // only while that number is unchanged and reads the slices otherwise. Every
  // path that changes slices or visits counts its UTC days in
  // ingest.stat_day_changes in the same transaction. The longest visit of
  // each site bounds where visits crossing an instant can begin, found
  // through the new index of visits by first time. Migration 17 drops the
  // period tables.
  sql: `
      create table ingest.stat_day_changes (
        site_id text not null,
        day timestamptz not null,
        changes bigint not null,
        primary key (site_id, day)
      );
      create table ingest.visit_spans (
        site_id text primary key,
        longest interval not null
      );
      insert into ingest.visit_spans
        select site_id, max(last_seen - first_seen) from ingest.visits group by site_id;
      create index visits_first_seen on ingest.visits (site_id, first_seen);
      create table ingest.visit_periods (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        changes bigint not null,
        primary key (site_id, period_start, period_end)
      );
      create table ingest.visit_period_sums (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        -- '*': all channels; '': visits without a channel; '=' || channel otherwise.
        channel_key text not null,
        visitors bigint not null,
        pageviews bigint not null,
        events bigint not null,
        leads bigint not null,
        visits bigint not null,
        bounces bigint not null,
        duration_ms bigint not null,
        visit_pageviews bigint not null,
        primary key (site_id, period_start, period_end, channel_key)
      );
    `,
};
