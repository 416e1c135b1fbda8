import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 4,
  name: "derived tables of the reports",
  // The reports' derived tables, kept by the writer in the same transaction
  // as the rows. Counters: additive sums per site and 15-minute UTC bucket
  // (every zone's offset is a multiple of 15 minutes, so any local hour or day
  // is a union of buckets). Visit slices: one row per visit, visitor, bot flag
  // and 15-minute bucket with its rows' first and last time and counts, so
  // visits and distinct visitors of any range stay exact. Visits: one row per
  // visit with its attribution (from its first page view). Existing rows fill
  // them at the end of this migration. Keys lead with site_id. Migration 17
  // (017_visits_and_rollups.ts) drops these tables.
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
      with d as (select x.site_id, 1::smallint as kind, x.received_at as at, x.seq,
          coalesce('s' || x.session_id, 'r' || x.seq) as visit_key,
          coalesce('v' || x.visitor_id, 's' || x.session_id, 'r' || x.seq) as visitor_key, x.bot,
          null::text as name, null::bigint as value, null::text as currency, x.channel,
          x.utm_source, x.utm_medium, x.utm_campaign, x.utm_term, x.utm_content, x.ad_link,
          ingest.url_path(x.url) as entry_page,
          coalesce(x.utm_source, ingest.referrer_source(x.referrer, x.url)) as source, x.country,
          x.device, x.browser, x.os,
          case when x.new_visitor then 'new' when not x.new_visitor then 'returning' end as
          visitor_type from ingest.page_views x where true
        union all select x.site_id, 2::smallint as kind, x.received_at as at, x.seq,
            coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id,
            's' || x.session_id, 'r' || x.seq) as visitor_key, coalesce(x.bot, false) as bot,
            x.name, x.value, x.currency, x.channel, x.utm_source, x.utm_medium, x.utm_campaign,
            x.utm_term, x.utm_content, x.ad_link, null::text as entry_page, x.utm_source as source,
            null::text as country, null::text as device, null::text as browser, null::text as os,
            null::text as visitor_type from ingest.events x where true
        union all select x.site_id, 3::smallint as kind, x.received_at as at, x.seq,
            coalesce('s' || x.session_id, 'r' || x.seq) as visit_key, coalesce('v' || x.visitor_id,
            's' || x.session_id, 'r' || x.seq) as visitor_key, false as bot, null::text as name,
            null::bigint as value, null::text as currency, x.channel, x.utm_source, x.utm_medium,
            x.utm_campaign, x.utm_term, x.utm_content, x.ad_link, null::text as entry_page,
            x.utm_source as source, null::text as country, null::text as device,
            null::text as browser, null::text as os, null::text as visitor_type
            from ingest.leads x where true),
      up_counters as (
      insert into ingest.stat_counters as c (site_id, bucket, bot, kind, name, currency, n, valued,
          revenue)
      select site_id, date_bin('15 minutes', at, timestamptz 'epoch') as bucket, bot, kind,
          coalesce(name, '') as name,
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
      insert into ingest.visit_slices as s (site_id, bucket, visit_key, visitor_key, bot, first_at,
          last_at, pageviews, events, leads)
      select site_id, date_bin('15 minutes', at, timestamptz 'epoch'), visit_key, visitor_key, bot,
          min(at), max(at),
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
      insert into ingest.visits as v (site_id, visit_key, first_seen, last_seen, first_rank,
          first_at, first_seq, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
          ad_link, entry_page, source, country, device, browser, os, visitor_type)
      select distinct on (site_id, visit_key) site_id, visit_key,
             min(at) over w, max(at) over w, kind <> 1, at, seq,
             channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link,
                 entry_page, source, country, device, browser, os, visitor_type
        from d window w as (partition by site_id, visit_key)
       order by site_id, visit_key, kind <> 1, at, seq
      on conflict (site_id, visit_key) do update
        set first_seen = least(v.first_seen, excluded.first_seen),
            last_seen = greatest(v.last_seen, excluded.last_seen),
            first_rank = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.first_rank else v.first_rank end,
            first_at = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.first_at else v.first_at end,
            first_seq = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.first_seq else v.first_seq end,
            channel = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.channel else v.channel end,
            utm_source = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.utm_source else v.utm_source end,
            utm_medium = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.utm_medium else v.utm_medium end,
            utm_campaign = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.utm_campaign else v.utm_campaign end,
            utm_term = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.utm_term else v.utm_term end,
            utm_content = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.utm_content else v.utm_content end,
            ad_link = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.ad_link else v.ad_link end,
            entry_page = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.entry_page else v.entry_page end,
            source = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.source else v.source end,
            country = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.country else v.country end,
            device = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.device else v.device end,
            browser = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.browser else v.browser end,
            os = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.os else v.os end,
            visitor_type = case when (excluded.first_rank, excluded.first_at,
                excluded.first_seq) < (v.first_rank, v.first_at,
                v.first_seq) then excluded.visitor_type else v.visitor_type end
      returning 1) select 1;
    `,
};
