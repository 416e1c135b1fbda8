import type { Migration } from "../lib/db/migrate.ts";

export const CONTENT_SCHEMA = "content";

// JSON values are stored as json, not jsonb: json keeps keys in the order they
// were written, and raw block values must come back exactly as imported.
export const contentMigrations: Migration[] = [
  {
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
  },
  {
    version: 2,
    name: "webhooks and their outbox",
    // The site's webhooks (from the manifest) and the outbox of the messages
    // this service causes, written by the import's transaction
    // (lib/webhooks/outbox.ts); and the sites' version column, never used, goes.
    sql: `
    create table content.webhooks (
      site_id text not null,
      url text not null,
      events jsonb not null,
      secret text not null,
      position int not null,
      primary key (site_id, url)
    );
    create table content.webhook_messages (
      site_id text not null,
      id text not null,
      type text not null,
      occurred_at timestamptz not null,
      subject text,
      data json not null,
      created_at timestamptz not null,
      primary key (site_id, id)
    );
    create index webhook_messages_by_subject
      on content.webhook_messages (site_id, type, subject) where subject is not null;
    create index webhook_messages_by_age on content.webhook_messages (created_at);
    create table content.webhook_deliveries (
      site_id text not null,
      message_id text not null,
      url text not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
      attempts int not null default 0,
      next_at timestamptz not null,
      first_attempt_at timestamptz,
      lease text,
      lease_until timestamptz,
      primary key (site_id, message_id, url),
      foreign key (site_id, message_id)
        references content.webhook_messages (site_id, id) on delete cascade
    );
    create index webhook_deliveries_due
      on content.webhook_deliveries (next_at) where state = 'pending';
    create index webhook_deliveries_by_url
      on content.webhook_deliveries (url) where state = 'pending';
    create table content.webhook_attempts (
      site_id text not null,
      seq bigint generated always as identity,
      message_id text not null,
      type text not null,
      url text not null,
      attempt int not null,
      status int,
      error text,
      at timestamptz not null,
      primary key (site_id, seq)
    );
    create index webhook_attempts_by_time on content.webhook_attempts (site_id, at, seq);
    create index webhook_attempts_by_age on content.webhook_attempts (at);
  
      alter table content.sites drop column version;`,
  },
];
