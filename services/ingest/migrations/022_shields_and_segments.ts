import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 22,
  name: "site shields, counts of dropped items, segments",
  // shields: the manifest's object as written (null: none). dropped_counts:
  // how many page views and events shields dropped, by reason, summed per
  // receive time (one row per site, reason and millisecond, so `stats dropped
  // --since` is exact). segments: a site's named filter sets.
  sql: `
      alter table ingest.sites add column shields json;
      create table ingest.dropped_counts (
        site_id text not null,
        reason text not null,
        at timestamptz not null,
        count bigint not null,
        primary key (site_id, reason, at)
      );
      create table ingest.segments (
        site_id text not null,
        id text not null,
        name text not null,
        filters json not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        primary key (site_id, id),
        unique (site_id, name)
      );
    `,
};
