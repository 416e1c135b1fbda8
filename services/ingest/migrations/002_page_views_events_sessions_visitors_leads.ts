import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 2,
  name: "page views, events, sessions, visitors, leads",
  // Page views and events are partitioned by month of received_at (the
  // partitions are created by partitions.ts as time goes on), so retention
  // drops whole partitions. Every table leads with site_id, so the
  // analytics tables can be distributed by site (Citus) later. Event ids
  // live in their own table: a unique index on a partitioned table must
  // contain the partition key, which would make ids unique per month only.
  sql: `
      alter table ingest.event_types add column first_event_at timestamptz;

      create sequence ingest.row_seq cache 100;

      create table ingest.page_views (
        site_id text not null,
        received_at timestamptz not null,
        seq bigint not null default nextval('ingest.row_seq'),
        visitor_id text,
        session_id text,
        url text not null,
        title text,
        referrer text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        click_ids json not null,
        ad_link text,
        ad_cookies json not null,
        screen text,
        viewport text,
        pixel_ratio double precision,
        language text,
        time_zone text,
        country text,
        device text,
        browser text,
        os text,
        channel text,
        new_visitor boolean,
        bot boolean not null,
        ip text
      ) partition by range (received_at);
      create index page_views_site_time on ingest.page_views (site_id, received_at, seq);
      create index page_views_visitor on ingest.page_views (site_id, visitor_id)
        where visitor_id is not null;

      create table ingest.events (
        site_id text not null,
        received_at timestamptz not null,
        seq bigint not null default nextval('ingest.row_seq'),
        name text not null,
        event_id text,
        visitor_id text,
        session_id text,
        url text,
        params json not null,
        value bigint,
        currency text,
        source text not null check (source in ('browser', 'server')),
        channel text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        ad_link text,
        bot boolean
      ) partition by range (received_at);
      create index events_site_time on ingest.events (site_id, received_at, seq);
      create index events_visitor on ingest.events (site_id, visitor_id)
        where visitor_id is not null;

      create table ingest.event_ids (
        site_id text not null,
        event_id text not null,
        received_at timestamptz not null,
        primary key (site_id, event_id)
      );
      create index event_ids_received on ingest.event_ids using brin (received_at);

      create table ingest.visitors (
        site_id text not null,
        visitor_id text not null,
        first_seen timestamptz not null,
        last_seen timestamptz not null,
        first_session_id text,
        primary key (site_id, visitor_id)
      );
      create index visitors_last_seen on ingest.visitors using brin (last_seen);

      create table ingest.sessions (
        site_id text not null,
        session_id text not null,
        visitor_id text,
        started_at timestamptz not null,
        channel text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        ad_link text,
        click_ids json not null,
        landing_url text,
        referrer text,
        primary key (site_id, session_id)
      );
      create index sessions_started on ingest.sessions using brin (started_at);
      create index sessions_visitor on ingest.sessions (site_id, visitor_id)
        where visitor_id is not null;

      create table ingest.leads (
        id uuid primary key,
        site_id text not null,
        received_at timestamptz not null,
        seq bigint not null default nextval('ingest.row_seq'),
        lead_id text,
        source text not null check (source in ('browser', 'server')),
        form text,
        name text,
        email text,
        phone text,
        message text,
        fields json not null,
        visitor_id text,
        session_id text,
        url text,
        channel text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        ad_link text
      );
      create unique index leads_lead_id on ingest.leads (site_id,
          lead_id) where lead_id is not null;
      create index leads_site_time on ingest.leads (site_id, received_at, seq);
      create index leads_visitor on ingest.leads (site_id, visitor_id) where visitor_id is not null;
    `,
};
