import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
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
      with d as (select x.site_id, 1::smallint as kind, x.received_at as at, x.seq,
          coalesce('s' || x.session_id, 'r' || x.seq) as visit_key,
          coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, x.bot,
          coalesce(x.page, ingest.url_path(x.url)) as page, x.channel as channel,
          coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url)) as source,
          case when ingest.referrer_source(x.referrer,
          x.url) is not null then x.referrer end as referrer, x.utm_source as utm_source,
          x.utm_medium as utm_medium, x.utm_campaign as utm_campaign, x.utm_term as utm_term,
          x.utm_content as utm_content, x.ad_link as ad_link,
          coalesce(x.page, ingest.url_path(x.url)) as entry_page,
          ingest.screen_class(x.screen) as screen, x.country as country, x.device as device,
          x.browser as browser, x.os as os,
          case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end as
          visitor_type
          from ingest.page_views x where true
          union all select x.site_id, 2::smallint as kind, x.received_at as at, x.seq,
          coalesce('s' || x.session_id, 'r' || x.seq) as visit_key,
          coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key,
          coalesce(x.bot, false) as bot, coalesce(x.page, ingest.url_path(x.url)) as page,
          x.channel as channel, x.utm_source as source, null::text as referrer,
          x.utm_source as utm_source, x.utm_medium as utm_medium, x.utm_campaign as utm_campaign,
          x.utm_term as utm_term, x.utm_content as utm_content, x.ad_link as ad_link,
          null::text as entry_page, null::text as screen, null::text as country,
          null::text as device, null::text as browser, null::text as os, null::text as visitor_type
          from ingest.events x where true
          union all select x.site_id, 3::smallint as kind, x.received_at as at, x.seq,
          coalesce('s' || x.session_id, 'r' || x.seq) as visit_key,
          coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key,
          false as bot, null::text as page, x.channel as channel, x.utm_source as source,
          null::text as referrer, x.utm_source as utm_source, x.utm_medium as utm_medium,
          x.utm_campaign as utm_campaign, x.utm_term as utm_term, x.utm_content as utm_content,
          x.ad_link as ad_link, null::text as entry_page, null::text as screen,
          null::text as country, null::text as device, null::text as browser, null::text as os,
          null::text as visitor_type from ingest.leads x where true),
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
             channel, source, referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
                 ad_link, entry_page, screen, country, device, browser, os, visitor_type
        from d order by site_id, visit_key, kind <> 1, at, seq),
    visit_last_view as (
      select distinct on (site_id, visit_key) site_id, visit_key, at as last_view_at,
             seq as last_view_seq, page as exit_page
        from d where kind = 1 order by site_id, visit_key, at desc, seq desc),
    touched as (
      insert into ingest.visits as v (site_id, visit_key, visitor_key, first_at, last_at, bot,
          mixed, pageviews, events, leads, first_rank, first_row_at, first_seq, channel, source,
          referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link,
          entry_page, screen, country, device, browser, os, visitor_type, last_view_at,
          last_view_seq, exit_page)
      select site_id, visit_key, visitor_key, first_at, last_at, bot, mixed, pageviews, events,
          leads, first_rank, first_row_at, first_seq, channel, source, referrer, utm_source,
          utm_medium, utm_campaign, utm_term, utm_content, ad_link, entry_page, screen, country,
          device, browser, os, visitor_type, last_view_at, last_view_seq, exit_page
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
            first_rank = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.first_rank else v.first_rank end,
            first_row_at = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.first_row_at else v.first_row_at end,
            first_seq = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.first_seq else v.first_seq end,
            channel = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.channel else v.channel end,
            source = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.source else v.source end,
            referrer = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.referrer else v.referrer end,
            utm_source = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.utm_source else v.utm_source end,
            utm_medium = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.utm_medium else v.utm_medium end,
            utm_campaign = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.utm_campaign else v.utm_campaign end,
            utm_term = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.utm_term else v.utm_term end,
            utm_content = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.utm_content else v.utm_content end,
            ad_link = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.ad_link else v.ad_link end,
            entry_page = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.entry_page else v.entry_page end,
            screen = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.screen else v.screen end,
            country = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.country else v.country end,
            device = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.device else v.device end,
            browser = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.browser else v.browser end,
            os = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.os else v.os end,
            visitor_type = case when (excluded.first_rank, excluded.first_row_at,
                excluded.first_seq) < (v.first_rank, v.first_row_at,
                v.first_seq) then excluded.visitor_type else v.visitor_type end,
            last_view_at = case when excluded.last_view_at is not null and (v.last_view_at is null
                or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at,
        v.last_view_seq)) then excluded.last_view_at else v.last_view_at end,
            last_view_seq = case when excluded.last_view_at is not null and (v.last_view_at is null
                or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at,
        v.last_view_seq)) then excluded.last_view_seq else v.last_view_seq end,
            exit_page = case when excluded.last_view_at is not null and (v.last_view_at is null or
    (excluded.last_view_at, excluded.last_view_seq) > (v.last_view_at,
        v.last_view_seq)) then excluded.exit_page else v.exit_page end
      returning site_id, first_at, last_at)
    select 1;
      delete from ingest.visit_spans;
      insert into ingest.visit_spans
        select site_id, max(last_at - first_at) from ingest.visits group by site_id;
    `,
};
