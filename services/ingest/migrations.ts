import type { Migration } from "../lib/db/migrate.ts";
import { BACKFILL } from "./stats/derived.ts";
import { outboxTablesSql } from "../lib/webhooks/outbox.ts";

export const INGEST_SCHEMA = "ingest";

export const ingestMigrations: Migration[] = [
  {
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
  },
  {
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
      create unique index leads_lead_id on ingest.leads (site_id, lead_id) where lead_id is not null;
      create index leads_site_time on ingest.leads (site_id, received_at, seq);
      create index leads_visitor on ingest.leads (site_id, visitor_id) where visitor_id is not null;
    `,
  },
  {
    version: 3,
    name: "sites without a time zone, URL parts for the reports",
    // A site's zone is absent until its owner chooses one. The functions read
    // the parts of a stored URL the reports group by; stored URLs were
    // normalised by the WHATWG URL parser, so the scheme and host are
    // lowercase and a relative URL starts with "/".
    sql: `
      alter table ingest.sites alter column time_zone drop not null;

      -- The path of a URL, without query and fragment: "/" when empty.
      create function ingest.url_path(url text) returns text
        language sql immutable strict parallel safe
        as $$ select coalesce(nullif(substring(url from
          '^(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://[^/?#]*)?([^?#]*)'), ''), '/') $$;

      -- The host of an absolute URL (without user, password and port), or null.
      create function ingest.url_host(url text) returns text
        language sql immutable strict parallel safe
        as $$ select nullif(lower(substring(url from
          '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]/?#]*\\]|[^/?#:]*)')), '') $$;

      -- A host as sites are compared: without a trailing dot and a leading "www.".
      create function ingest.site_host(host text) returns text
        language sql immutable strict parallel safe
        as $$ select regexp_replace(rtrim(host, '.'), '^www[.]', '') $$;

      -- The referrer's host when it is another site than the page's, else null.
      create function ingest.referrer_source(referrer text, page_url text) returns text
        language sql immutable parallel safe
        as $$ select case
          when ingest.url_host(referrer) is not null
           and ingest.site_host(ingest.url_host(referrer))
               is distinct from ingest.site_host(ingest.url_host(page_url))
          then ingest.url_host(referrer) end $$;
    `,
  },
  {
    version: 4,
    name: "derived tables of the reports",
    // Kept at write time in the same transaction as the rows (stats/derived.ts).
    // Counters: additive sums per site and 15-minute UTC bucket (every zone's
    // offset is a multiple of 15 minutes, so any local hour or day is a union
    // of buckets). Visit slices: one row per visit, visitor, bot flag and
    // 15-minute bucket with its rows' first and last time and counts, so
    // visits and distinct visitors of any range stay exact. Visits: one row
    // per visit with its attribution (from its first page view). Existing
    // rows are backfilled at the end of this migration. Keys lead with site_id.
    sql: `
      create table ingest.stat_counters (
        site_id text not null,
        bucket timestamptz not null,
        bot boolean not null,
        kind smallint not null,
        name text not null,
        currency text not null,
        n bigint not null,
        valued bigint not null,
        revenue numeric not null,
        primary key (site_id, bucket, bot, kind, name, currency)
      );
      create table ingest.visit_slices (
        site_id text not null,
        bucket timestamptz not null,
        visit_key text not null,
        visitor_key text not null,
        bot boolean not null,
        first_at timestamptz not null,
        last_at timestamptz not null,
        pageviews int not null,
        events int not null,
        leads int not null,
        primary key (site_id, bucket, visit_key, visitor_key, bot)
      );
      create table ingest.visits (
        site_id text not null,
        visit_key text not null,
        first_seen timestamptz not null,
        last_seen timestamptz not null,
        first_rank boolean not null,
        first_at timestamptz not null,
        first_seq bigint not null,
        channel text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        ad_link text,
        entry_page text,
        source text,
        country text,
        device text,
        browser text,
        os text,
        visitor_type text,
        primary key (site_id, visit_key)
      );
      ${BACKFILL}
    `,
  },
  {
    version: 5,
    name: "leads keyed by site",
    // Every other key of the analytics tables leads with site_id, so they can
    // be distributed by site (Citus needs the distribution column in every
    // primary and unique key). The lead's id stays a random UUID: unique on
    // its own in practice, and still unique with its site. Rows are kept;
    // the key is rebuilt in place.
    sql: `
      alter table ingest.leads drop constraint leads_pkey;
      alter table ingest.leads add constraint leads_pkey primary key (site_id, id);
    `,
  },
  {
    version: 6,
    name: "visit slices carry their visit's attributes",
    // The reports group and filter visits by their attributes; read from
    // ingest.visits, a month's visits meant joining the whole table (seconds
    // at ten million page views). Each slice now carries its visit's
    // attributes (kept by stats/derived.ts: written from the visit's upsert,
    // and a visit's older slices updated when an earlier row changes them),
    // so a range reads only its slices. Existing slices take them from
    // ingest.visits, itself derived from the rows.
    sql: `
      alter table ingest.visit_slices
        add column channel text,
        add column utm_source text,
        add column utm_medium text,
        add column utm_campaign text,
        add column utm_term text,
        add column utm_content text,
        add column ad_link text,
        add column entry_page text,
        add column source text,
        add column country text,
        add column device text,
        add column browser text,
        add column os text,
        add column visitor_type text;
      update ingest.visit_slices s
         set (channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, source, country, device, browser, os, visitor_type)
           = (v.channel, v.utm_source, v.utm_medium, v.utm_campaign, v.utm_term, v.utm_content, v.ad_link, v.entry_page, v.source, v.country, v.device, v.browser, v.os, v.visitor_type)
        from ingest.visits v
       where v.site_id = s.site_id and v.visit_key = s.visit_key;
    `,
  },
  {
    version: 7,
    name: "page views and events keep their page",
    // The reports' event:page is the path of a row's URL (ingest.url_path, a
    // regular expression of about 3 µs a row): most of an event:page query's
    // time at ten million page views. The insert now stores it (tables.ts,
    // pageColumn). Existing rows keep null and readers fall back to the
    // function: rewriting every stored row here would hold the tables for
    // minutes on a big site, for a gain only on old ranges.
    sql: `
      alter table ingest.page_views add column page text;
      alter table ingest.events add column page text;
    `,
  },
  {
    version: 8,
    name: "report counters per UTC day",
    // The quarter-hour counters summed per UTC day, kept with them in the same
    // transaction (stats/derived.ts). A year read from the quarter hours is
    // 35,000 buckets times the kinds, names and currencies (about 200,000 rows
    // at ten million page views); a query reads a whole UTC day that lies in
    // one of its buckets from here instead, and only the quarter hours of the
    // days its local buckets cut (the range's ends, a zone's month edges).
    // Filled from the quarter hours here; the key leads with site_id.
    sql: `
      create table ingest.stat_counter_days (
        site_id text not null,
        day timestamptz not null,
        bot boolean not null,
        kind smallint not null,
        name text not null,
        currency text not null,
        n bigint not null,
        valued bigint not null,
        revenue numeric not null,
        primary key (site_id, day, bot, kind, name, currency)
      );
      insert into ingest.stat_counter_days
        select site_id, date_bin('1 day', bucket, timestamptz 'epoch'), bot, kind, name, currency,
               sum(n), sum(valued), sum(revenue)
          from ingest.stat_counters group by 1, 2, 3, 4, 5, 6;
    `,
  },
  {
    version: 9,
    name: "visit sums per local period",
    // The visit queries by day, week or month (the Traffic report) counted
    // distinct visitors and grouped visits of every slice in range: seconds
    // at ten million page views. Their sums per local period are now kept
    // (stats/periods.ts): built in the background for periods that have
    // ended, each with the number of changes made to the UTC days it
    // covers at the time; a query uses a period's sums only while that
    // number is unchanged and reads the slices otherwise. Every path that
    // changes slices or visits counts its UTC days in
    // ingest.stat_day_changes in the same transaction. The longest visit of
    // each site bounds where visits crossing an instant can begin, found
    // through the new index of visits by first time.
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
  },
  {
    version: 10,
    name: "visitors per UTC day and their previous day",
    // A dashboard summary over a year counted the distinct visitors of every
    // slice in range: seconds at ten million page views. Each visitor's UTC
    // days (slices that are not bots) and, per day, how many of its visitors
    // had their previous day when, are now built in the background for days
    // that have ended (stats/returns.ts); a range's visitors are then a sum
    // over its days of those whose previous day lies before it. A day's build
    // row holds the changes counted on the site's days up to it when built;
    // a query uses a day only while that number is unchanged. Keys lead with
    // site_id; since is '-infinity' for a visitor's first day.
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
  },
  {
    version: 11,
    name: "visitor days per channel",
    // A year's breakdown by visit:channel still counted the distinct visitors
    // of every slice in range per channel. The visitor days, their counts by
    // previous day and their build rows are now kept in tables of their own
    // with a channel key (as the period sums key channels: '=' and the
    // channel, '' for none; '*' for all channels), built in the background
    // from the first day. The tables of migration 10 are left in place for
    // a rollback to the code before this (whose builder fills them again and
    // whose rules still hold for them) but emptied: nothing reads them now,
    // and at ten million page views they held millions of rows.
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
  },
  {
    version: 12,
    name: "visit sums and returning visitors per attribute",
    // A year's breakdown by a visit: attribute other than channel (source,
    // UTM tags, entry page, country, device, browser, ad link) read every
    // slice of the year: 8 to 17 s at ten million page views. The period sums
    // and the visitors by previous day are now kept per value of every visit
    // attribute (stats/periods.ts, stats/returns.ts), in new tables keyed by
    // attribute ('*' for all visits) and value ('' for none, '=' and the
    // value otherwise). A visitor's previous day of a value is found in the
    // slices themselves, through the new index of slices by visitor, instead
    // of in per-channel visitor days (fifty million rows at that scale for
    // every attribute). The tables of migrations 9 and 11 are left in place
    // for a rollback to the code before this, emptied: the builder of that
    // code fills them again, and their rules (changes counted per UTC day)
    // still hold for them. The new tables are built in the background; until
    // then queries read the slices, as before anything was built.
    sql: `
      truncate ingest.visit_periods, ingest.visit_period_sums, ingest.visitor_channel_days,
               ingest.visitor_channel_returns, ingest.visitor_channel_builds;
      create index visit_slices_visitor on ingest.visit_slices (site_id, visitor_key, bucket);
      create table ingest.visit_attribute_periods (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        changes bigint not null,
        primary key (site_id, period_start, period_end)
      );
      create table ingest.visit_attribute_sums (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        attribute text not null,
        value_key text not null,
        visitors bigint not null,
        pageviews bigint not null,
        events bigint not null,
        leads bigint not null,
        visits bigint not null,
        bounces bigint not null,
        duration_ms bigint not null,
        visit_pageviews bigint not null,
        primary key (site_id, period_start, period_end, attribute, value_key)
      );
      create table ingest.visitor_attribute_returns (
        site_id text not null,
        attribute text not null,
        value_key text not null,
        day timestamptz not null,
        since timestamptz not null,
        visitors bigint not null,
        primary key (site_id, attribute, day, value_key, since)
      );
      create table ingest.visitor_attribute_builds (
        site_id text not null,
        day timestamptz not null,
        changes_through bigint not null,
        primary key (site_id, day)
      );
    `,
  },
  {
    version: 13,
    name: "revenue per local period and visit attribute",
    // The dashboard's Ad channels report (revenue by visit:ad_link) read every
    // valued event of its range, each joined to its slice for its visit's
    // attributes, beside the visit sums: a year of them was most of its time.
    // The period sums now keep the revenue per period, attribute value and
    // currency of the valued events whose rows are not bots, built with the
    // other sums in the same statement (stats/periods.ts). The sums built
    // without it are emptied, to be built again with it.
    sql: `
      truncate ingest.visit_attribute_periods, ingest.visit_attribute_sums;
      create table ingest.visit_attribute_revenue (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        attribute text not null,
        value_key text not null,
        currency text not null,
        revenue numeric not null,
        primary key (site_id, period_start, period_end, attribute, value_key, currency)
      );
    `,
  },
  {
    version: 14,
    name: "page views and events per page and UTC day",
    // An event:page query (the pages of a site, page views and events per
    // page) read every row of its range: 4.7 s for a year at ten million page
    // views. The rows' counts per page, kind, event name, currency and bot
    // flag are now built in the background per UTC day that has ended
    // (stats/pages.ts), with the changes counted on that day when built; a
    // query reads a day from here only while that number is unchanged, and
    // the rest from the rows. Keys lead with site_id; '' stands for no page,
    // name or currency, as in the counters.
    sql: `
      create table ingest.page_day_counts (
        site_id text not null,
        day timestamptz not null,
        bot boolean not null,
        kind smallint not null,
        name text not null,
        currency text not null,
        page text not null,
        n bigint not null,
        valued bigint not null,
        revenue numeric not null,
        primary key (site_id, day, bot, kind, name, currency, page)
      );
      create table ingest.page_day_builds (
        site_id text not null,
        day timestamptz not null,
        changes bigint not null,
        primary key (site_id, day)
      );
    `,
  },
  {
    version: 15,
    name: "a visit without a session lives in its slice alone",
    // A row without a session is a visit of its own (stats/derived.ts): its
    // first and last time and its attributes are the row's, and its one
    // slice holds them all. Its row in ingest.visits said nothing more, and
    // writing it was about 30% of what the reports' upkeep cost a server
    // event. The writer no longer writes such rows; those written before go.
    sql: "delete from ingest.visits where visit_key like 'r%';",
  },
  {
    version: 16,
    name: "screen classes for the reports",
    // visit:screen classes a visit by the screen width of its first page view
    // (stored as "WIDTHxHEIGHT"): one SQL definition, which the reports and
    // the tables kept for them share.
    sql: `
      create function ingest.screen_class(screen text) returns text
        language sql immutable strict parallel safe
        as $$ select case
          when w is null then null
          when w < 576 then 'mobile'
          when w < 992 then 'tablet'
          when w < 1440 then 'laptop'
          else 'desktop' end
        from (select substring(screen from '^([0-9]{1,9})x')::int as w) s $$;
    `,
  },
  {
    version: 17,
    name: "webhooks and their outbox",
    // The site's webhooks (from the manifest) and the outbox of lead.created
    // messages, written by the writer's transaction (lib/webhooks/outbox.ts).
    sql: outboxTablesSql(INGEST_SCHEMA),
  },
];
