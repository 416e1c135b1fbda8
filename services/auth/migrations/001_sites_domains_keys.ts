import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 1,
  name: "sites, domains and hashed keys",
  sql: `
      create table auth.sites (
        site_id text primary key,
        name text not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );
      -- host: lowercase, without a leading "www.", as Origins are compared.
      create table auth.site_domains (
        host text primary key,
        site_id text not null references auth.sites (site_id) on delete cascade,
        domain text not null,
        position int not null
      );
      create index site_domains_site on auth.site_domains (site_id);
      -- Keys are stored only as "sha256:<hex>" of the key.
      create table auth.keys (
        key_hash text primary key,
        site_id text not null references auth.sites (site_id) on delete cascade,
        kind text not null check (kind in ('site', 'secret')),
        created_at timestamptz not null default clock_timestamp(),
        revoked_at timestamptz
      );
      create index keys_site on auth.keys (site_id, kind) where revoked_at is null;
    `,
};
