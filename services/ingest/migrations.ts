import type { Migration } from "../lib/db/migrate.ts";

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
      with d as (select x.site_id, 1::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, x.bot, null::text as name, null::bigint as value, null::text as currency, x.channel, x.utm_source, x.utm_medium, x.utm_campaign, x.utm_term, x.utm_content, x.ad_link, ingest.url_path(x.url) as entry_page, coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url)) as source, x.country, x.device, x.browser, x.os, case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end as visitor_type from ingest.page_views x where true
        union all select x.site_id, 2::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, coalesce(x.bot, false) as bot, x.name, x.value, x.currency, x.channel, x.utm_source, x.utm_medium, x.utm_campaign, x.utm_term, x.utm_content, x.ad_link, null::text as entry_page, x.utm_source as source, null::text as country, null::text as device, null::text as browser, null::text as os, null::text as visitor_type from ingest.events x where true
        union all select x.site_id, 3::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, false as bot, null::text as name, null::bigint as value, null::text as currency, x.channel, x.utm_source, x.utm_medium, x.utm_campaign, x.utm_term, x.utm_content, x.ad_link, null::text as entry_page, x.utm_source as source, null::text as country, null::text as device, null::text as browser, null::text as os, null::text as visitor_type from ingest.leads x where true),
      up_counters as (
      insert into ingest.stat_counters as c (site_id, bucket, bot, kind, name, currency, n, valued, revenue)
      select site_id, date_bin('15 minutes', at, timestamptz 'epoch') as bucket, bot, kind, coalesce(name, '') as name,
         coalesce(currency, '') as currency, count(*) as n,
         count(*) filter (where value is not null and currency is not null) as valued,
         coalesce(sum(value) filter (where value is not null and currency is not null), 0)
           as revenue
    from d group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6
      on conflict (site_id, bucket, bot, kind, name, currency) do update
        set n = c.n + excluded.n, valued = c.valued + excluded.valued,
            revenue = c.revenue + excluded.revenue
      returning 1),
      up_slices as (
      insert into ingest.visit_slices as s (site_id, bucket, visit_key, visitor_key, bot, first_at, last_at, pageviews, events, leads)
      select site_id, date_bin('15 minutes', at, timestamptz 'epoch'), visit_key, visitor_key, bot, min(at), max(at),
             count(*) filter (where kind = 1),
             count(*) filter (where kind = 2),
             count(*) filter (where kind = 3)
        from d group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (site_id, bucket, visit_key, visitor_key, bot) do update
        set first_at = least(s.first_at, excluded.first_at),
            last_at = greatest(s.last_at, excluded.last_at),
            pageviews = s.pageviews + excluded.pageviews, events = s.events + excluded.events,
            leads = s.leads + excluded.leads
      returning 1),
      up_visits as (
      insert into ingest.visits as v (site_id, visit_key, first_seen, last_seen, first_rank, first_at, first_seq, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, source, country, device, browser, os, visitor_type)
      select distinct on (site_id, visit_key) site_id, visit_key,
             min(at) over w, max(at) over w, kind <> 1, at, seq,
             channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, source, country, device, browser, os, visitor_type
        from d window w as (partition by site_id, visit_key)
       order by site_id, visit_key, kind <> 1, at, seq
      on conflict (site_id, visit_key) do update
        set first_seen = least(v.first_seen, excluded.first_seen),
            last_seen = greatest(v.last_seen, excluded.last_seen),
            first_rank = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.first_rank else v.first_rank end,
            first_at = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.first_at else v.first_at end,
            first_seq = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.first_seq else v.first_seq end,
            channel = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.channel else v.channel end,
            utm_source = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.utm_source else v.utm_source end,
            utm_medium = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.utm_medium else v.utm_medium end,
            utm_campaign = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.utm_campaign else v.utm_campaign end,
            utm_term = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.utm_term else v.utm_term end,
            utm_content = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.utm_content else v.utm_content end,
            ad_link = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.ad_link else v.ad_link end,
            entry_page = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.entry_page else v.entry_page end,
            source = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.source else v.source end,
            country = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.country else v.country end,
            device = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.device else v.device end,
            browser = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.browser else v.browser end,
            os = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.os else v.os end,
            visitor_type = case when (excluded.first_rank, excluded.first_at, excluded.first_seq) < (v.first_rank, v.first_at, v.first_seq) then excluded.visitor_type else v.visitor_type end
      returning 1) select 1;
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
    // The visitor days, their counts by previous day and their build rows,
    // kept in tables of their own with a channel key (as the period sums key
    // channels: '=' and the channel, '' for none; '*' for all channels) and
    // built in the background from the first day, so that a year's breakdown
    // by visit:channel does not count the distinct visitors of every slice in
    // range per channel. The tables of migration 10 stay for a rollback to
    // the release without this migration (whose builder fills them again and
    // whose rules hold for them) but are emptied: nothing here reads them,
    // and at ten million page views they hold millions of rows.
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
    // slices themselves, through the index of slices by visitor, not in
    // per-channel visitor days (fifty million rows at that scale for every
    // attribute). The tables of migrations 9 and 11 stay, emptied, for a
    // rollback to the release without this migration: its builder fills them
    // again, and their rules (changes counted per UTC day) hold for them. The
    // tables here are built in the background; while a build is due, queries
    // read the slices.
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
    // event. The writer writes no such rows; this deletes those an older
    // release wrote.
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
    name: "one visits table and period rollups",
    // The reports read three things (stats/engine.ts): the stored rows; one
    // row per visit (ingest.visits, kept by the writer: its times, counts,
    // visitor, attributes and exit page); and rollups of whole local days and
    // months per value of each dimension, with the set of visitors of each
    // (ingest.rollups, built in the background and used while the changes
    // counted on their UTC days are those they were built with). The tables
    // of migrations 4 and 8 to 14 go: nothing reads them. Visits are rebuilt
    // from the stored rows here, sessions and rows without one alike.
    sql: `
      drop table ingest.stat_counters, ingest.stat_counter_days, ingest.visit_slices,
        ingest.visit_periods, ingest.visit_period_sums, ingest.visitor_days,
        ingest.visitor_returns, ingest.visitor_day_builds, ingest.visitor_channel_days,
        ingest.visitor_channel_returns, ingest.visitor_channel_builds,
        ingest.visit_attribute_periods, ingest.visit_attribute_sums,
        ingest.visit_attribute_revenue, ingest.visitor_attribute_returns,
        ingest.visitor_attribute_builds, ingest.page_day_counts, ingest.page_day_builds,
        ingest.visits;
      create table ingest.visits (
        site_id text not null,
        visit_key text not null,
        visitor_key text not null,
        first_at timestamptz not null,
        last_at timestamptz not null,
        bot boolean not null,
        mixed boolean not null,
        pageviews int not null,
        events int not null,
        leads int not null,
        first_rank boolean not null,
        first_row_at timestamptz not null,
        first_seq bigint not null,
        channel text,
        source text,
        referrer text,
        utm_source text,
        utm_medium text,
        utm_campaign text,
        utm_term text,
        utm_content text,
        ad_link text,
        entry_page text,
        screen text,
        country text,
        device text,
        browser text,
        os text,
        visitor_type text,
        last_view_at timestamptz,
        last_view_seq bigint,
        exit_page text,
        primary key (site_id, visit_key)
      );
      create index visits_first_at on ingest.visits (site_id, first_at);
      create index visits_mixed on ingest.visits (site_id, first_at) where mixed;
      create table ingest.visitor_numbers (
        site_id text not null,
        visitor_key text not null,
        number bigint generated always as identity,
        primary key (site_id, visitor_key)
      );
      create table ingest.rollup_periods (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        zone text not null,
        version int not null,
        props text[] not null,
        changes bigint not null,
        primary key (site_id, period_start, period_end)
      );
      create table ingest.rollups (
        site_id text not null,
        period_start timestamptz not null,
        period_end timestamptz not null,
        -- The group's place among its period's groups.
        position int not null,
        dimension text not null,
        value text,
        event_name text,
        visitors bigint not null,
        visitor_set bytea not null,
        visits bigint,
        bounces bigint,
        duration_ms bigint,
        visit_pageviews bigint,
        pageviews bigint not null,
        events bigint not null,
        leads bigint not null,
        revenue json not null,
        primary key (site_id, period_start, period_end, position),
        foreign key (site_id, period_start, period_end)
          references ingest.rollup_periods on delete cascade
      );
      create index rollups_by_dimension on ingest.rollups (site_id, dimension, period_start);
      -- The records history import stored that have no id of their own, by their line's hash.
      create table ingest.imported_rows (
        site_id text not null,
        import_id text not null,
        primary key (site_id, import_id)
      );
      with d as (select x.site_id, 1::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, x.bot, coalesce(x.page, ingest.url_path(x.url)) as page, x.channel as channel, coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url)) as source, case when ingest.referrer_source(x.referrer, x.url) is not null then x.referrer end as referrer, x.utm_source as utm_source, x.utm_medium as utm_medium, x.utm_campaign as utm_campaign, x.utm_term as utm_term, x.utm_content as utm_content, x.ad_link as ad_link, coalesce(x.page, ingest.url_path(x.url)) as entry_page, ingest.screen_class(x.screen) as screen, x.country as country, x.device as device, x.browser as browser, x.os as os, case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end as visitor_type from ingest.page_views x where true union all select x.site_id, 2::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, coalesce(x.bot, false) as bot, coalesce(x.page, ingest.url_path(x.url)) as page, x.channel as channel, x.utm_source as source, null::text as referrer, x.utm_source as utm_source, x.utm_medium as utm_medium, x.utm_campaign as utm_campaign, x.utm_term as utm_term, x.utm_content as utm_content, x.ad_link as ad_link, null::text as entry_page, null::text as screen, null::text as country, null::text as device, null::text as browser, null::text as os, null::text as visitor_type from ingest.events x where true union all select x.site_id, 3::smallint as kind, x.received_at as at, x.seq, coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, false as bot, null::text as page, x.channel as channel, x.utm_source as source, null::text as referrer, x.utm_source as utm_source, x.utm_medium as utm_medium, x.utm_campaign as utm_campaign, x.utm_term as utm_term, x.utm_content as utm_content, x.ad_link as ad_link, null::text as entry_page, null::text as screen, null::text as country, null::text as device, null::text as browser, null::text as os, null::text as visitor_type from ingest.leads x where true),
    visit_counts as (
      select site_id, visit_key, min(at) as first_at, max(at) as last_at,
             min(visitor_key) as visitor_key, bool_and(bot) as bot,
             min(visitor_key) <> max(visitor_key) or bool_or(bot) <> bool_and(bot) as mixed,
             (count(*) filter (where kind = 1))::int as pageviews,
             (count(*) filter (where kind = 2))::int as events,
             (count(*) filter (where kind = 3))::int as leads
        from d group by site_id, visit_key),
    visit_first as (
      select distinct on (site_id, visit_key) site_id, visit_key,
             kind <> 1 as first_rank, at as first_row_at, seq as first_seq,
             channel, source, referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, screen, country, device, browser, os, visitor_type
        from d order by site_id, visit_key, kind <> 1, at, seq),
    visit_last_view as (
      select distinct on (site_id, visit_key) site_id, visit_key, at as last_view_at,
             seq as last_view_seq, page as exit_page
        from d where kind = 1 order by site_id, visit_key, at desc, seq desc),
    touched as (
      insert into ingest.visits as v (site_id, visit_key, visitor_key, first_at, last_at, bot, mixed, pageviews, events, leads, first_rank, first_row_at, first_seq, channel, source, referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, screen, country, device, browser, os, visitor_type, last_view_at, last_view_seq, exit_page)
      select site_id, visit_key, visitor_key, first_at, last_at, bot, mixed, pageviews, events, leads, first_rank, first_row_at, first_seq, channel, source, referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, screen, country, device, browser, os, visitor_type, last_view_at, last_view_seq, exit_page
        from visit_counts join visit_first using (site_id, visit_key)
        left join visit_last_view using (site_id, visit_key)
       order by site_id, visit_key
      on conflict (site_id, visit_key) do update
        set first_at = least(v.first_at, excluded.first_at),
            last_at = greatest(v.last_at, excluded.last_at),
            mixed = v.mixed or excluded.mixed or v.visitor_key <> excluded.visitor_key
                    or v.bot <> excluded.bot,
            visitor_key = least(v.visitor_key, excluded.visitor_key),
            bot = v.bot and excluded.bot,
            pageviews = v.pageviews + excluded.pageviews,
            events = v.events + excluded.events,
            leads = v.leads + excluded.leads,
            first_rank = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.first_rank else v.first_rank end,
            first_row_at = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.first_row_at else v.first_row_at end,
            first_seq = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.first_seq else v.first_seq end,
            channel = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.channel else v.channel end,
            source = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.source else v.source end,
            referrer = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.referrer else v.referrer end,
            utm_source = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.utm_source else v.utm_source end,
            utm_medium = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.utm_medium else v.utm_medium end,
            utm_campaign = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.utm_campaign else v.utm_campaign end,
            utm_term = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.utm_term else v.utm_term end,
            utm_content = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.utm_content else v.utm_content end,
            ad_link = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.ad_link else v.ad_link end,
            entry_page = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.entry_page else v.entry_page end,
            screen = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.screen else v.screen end,
            country = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.country else v.country end,
            device = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.device else v.device end,
            browser = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.browser else v.browser end,
            os = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.os else v.os end,
            visitor_type = case when (excluded.first_rank, excluded.first_row_at, excluded.first_seq) < (v.first_rank, v.first_row_at, v.first_seq) then excluded.visitor_type else v.visitor_type end,
            last_view_at = case when excluded.last_view_at is not null and (v.last_view_at is null or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at, v.last_view_seq)) then excluded.last_view_at else v.last_view_at end,
            last_view_seq = case when excluded.last_view_at is not null and (v.last_view_at is null or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at, v.last_view_seq)) then excluded.last_view_seq else v.last_view_seq end,
            exit_page = case when excluded.last_view_at is not null and (v.last_view_at is null or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at, v.last_view_seq)) then excluded.exit_page else v.exit_page end
      returning site_id, first_at, last_at)
    select 1;
      delete from ingest.visit_spans;
      insert into ingest.visit_spans
        select site_id, max(last_at - first_at) from ingest.visits group by site_id;
    `,
  },
  {
    version: 18,
    name: "webhooks and their outbox",
    // The site's webhooks (from the manifest) and the outbox of lead.created
    // messages, written by the writer's transaction (lib/webhooks/outbox.ts).
    sql: `
    create table ingest.webhooks (
      site_id text not null,
      url text not null,
      events jsonb not null,
      secret text not null,
      position int not null,
      primary key (site_id, url)
    );
    create table ingest.webhook_messages (
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
      on ingest.webhook_messages (site_id, type, subject) where subject is not null;
    create index webhook_messages_by_age on ingest.webhook_messages (created_at);
    create table ingest.webhook_deliveries (
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
        references ingest.webhook_messages (site_id, id) on delete cascade
    );
    create index webhook_deliveries_due
      on ingest.webhook_deliveries (next_at) where state = 'pending';
    create index webhook_deliveries_by_url
      on ingest.webhook_deliveries (url) where state = 'pending';
    create table ingest.webhook_attempts (
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
    create index webhook_attempts_by_time on ingest.webhook_attempts (site_id, at, seq);
    create index webhook_attempts_by_age on ingest.webhook_attempts (at);
  `,
  },
];
