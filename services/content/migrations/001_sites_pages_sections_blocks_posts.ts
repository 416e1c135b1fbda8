import type { Migration } from "../../lib/db/migrate.ts";

// JSON values are stored as json, not jsonb: json keeps keys in the order they
// were written, and raw block values must come back exactly as imported.
export const migration: Migration = {
  version: 1,
  name: "sites, pages, sections, blocks, posts",
  sql: `
      create table content.sites (
        site_id text primary key,
        languages json not null,
        blog_page_size int not null,
        blog_order text not null,
        blog_scheduling boolean not null,
        -- Never read or written (no cache compares it); the next migration of this schema drops it.
        version int not null default 1,
        updated_at timestamptz not null default now()
      );
      create table content.pages (
        site_id text not null references content.sites (site_id) on delete cascade,
        marker text not null,
        href text not null,
        position int not null,
        primary key (site_id, marker)
      );
      create table content.sections (
        site_id text not null references content.sites (site_id) on delete cascade,
        marker text not null,
        page_marker text, -- null for a section that belongs to no page
        show boolean not null,
        position int not null,
        primary key (site_id, marker)
      );
      create table content.blocks (
        site_id text not null,
        section_marker text not null,
        marker text not null,
        -- Creation order: "the oldest block with that marker" is the lowest id.
        id int generated always as identity unique,
        name text not null,
        type text not null,
        multilang boolean not null,
        fields json,
        content json,
        position int not null,
        updated_at timestamptz not null default now(),
        primary key (site_id, section_marker, marker),
        foreign key (site_id, section_marker)
          references content.sections (site_id, marker) on delete cascade
      );
      create index blocks_by_marker on content.blocks (site_id, marker, id);
      create table content.posts (
        site_id text not null references content.sites (site_id) on delete cascade,
        slug text not null,
        status text not null check (status in ('draft', 'published')),
        published_at timestamptz,
        created_at timestamptz,
        author text,
        title json not null,
        image json,
        body json not null,
        position int not null,
        updated_at timestamptz not null default now(),
        primary key (site_id, slug)
      );
    `,
};
