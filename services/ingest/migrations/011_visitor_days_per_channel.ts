import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 11,
  name: "visitor days per channel",
  // The visitor days, their counts by previous day and their build rows,
  // kept in tables of their own with a channel key (as the period sums key
  // channels: '=' and the channel, '' for none; '*' for all channels) and
  // built in the background from the first day, so that a year's breakdown by
  // visit:channel does not count the distinct visitors of every slice in range
  // per channel. The tables of migration 10 stay for a rollback to the release
  // before this migration (whose builder fills them again and whose rules hold
  // for them) but are emptied: nothing reads them, and at ten million page
  // views they hold millions of rows. Migration 17 drops all of them.
  sql: `
      truncate ingest.visitor_days, ingest.visitor_returns, ingest.visitor_day_builds;
      create table ingest.visitor_channel_days (
        site_id text not null,
        channel_key text not null,
        visitor_key text not null,
        day timestamptz not null,
        primary key (site_id, channel_key, visitor_key, day)
      );
      create index visitor_channel_days_day on ingest.visitor_channel_days (site_id, day);
      create table ingest.visitor_channel_returns (
        site_id text not null,
        channel_key text not null,
        day timestamptz not null,
        since timestamptz not null,
        visitors bigint not null,
        primary key (site_id, channel_key, day, since)
      );
      create table ingest.visitor_channel_builds (
        site_id text not null,
        day timestamptz not null,
        changes_through bigint not null,
        primary key (site_id, day)
      );
    `,
};
