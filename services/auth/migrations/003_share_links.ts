import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 3,
  name: "share links and embed origins",
  // A share link (sh_ + 32 hex) shows one site's reports read-only; its id
  // is in the link itself, its password (optional) only as a scrypt hash.
  // embed_origins: the https origins that may frame a site's shared page.
  sql: `
      create table auth.share_links (
        id text primary key,
        site_id text not null references auth.sites (site_id) on delete cascade,
        label text,
        password_hash text,
        expires_at timestamptz,
        created_at timestamptz not null default clock_timestamp(),
        revoked_at timestamptz
      );
      create index share_links_site on auth.share_links (site_id, created_at);
      alter table auth.sites add column embed_origins jsonb not null default '[]'::jsonb;
    `,
};
