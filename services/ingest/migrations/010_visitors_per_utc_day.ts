import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 10,
  name: "visitors per UTC day and their previous day",
  // Each visitor's UTC days (slices that are not bots) and, per day, how
  // many of its visitors had their previous day when, built in the background
  // for days that have ended, so that a year's dashboard summary does not
  // count the distinct visitors of every slice in range (seconds at ten
  // million page views): a range's visitors are a sum over its days of those
  // whose previous day lies before it. A day's build row holds the changes
  // counted on the site's days up to it when built; a query uses a day only
  // while that number is unchanged. Keys lead with site_id; since is
  // '-infinity' for a visitor's first day. Migration 17 drops these tables.
  sql: `
      create table ingest.visitor_days (
        site_id text not null,
        visitor_key text not null,
        day timestamptz not null,
        primary key (site_id, visitor_key, day)
      );
      create index visitor_days_day on ingest.visitor_days (site_id, day);
      create table ingest.visitor_returns (
        site_id text not null,
        day timestamptz not null,
        since timestamptz not null,
        visitors bigint not null,
        primary key (site_id, day, since)
      );
      create table ingest.visitor_day_builds (
        site_id text not null,
        day timestamptz not null,
        changes_through bigint not null,
        primary key (site_id, day)
      );
    `,
};
