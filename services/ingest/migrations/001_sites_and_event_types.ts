import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 1,
  name: "sites and event types",
  sql: `
      create table ingest.sites (
        site_id text primary key,
        time_zone text not null,
        updated_at timestamptz not null default now()
      );
      create table ingest.event_types (
        site_id text not null references ingest.sites (site_id) on delete cascade,
        name text not null,
        title text not null,
        description text not null,
        status text not null check (status in ('active', 'archived')),
        params json not null,
        brings_revenue boolean not null,
        currency text,
        position int not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        primary key (site_id, name)
      );
    `,
};
