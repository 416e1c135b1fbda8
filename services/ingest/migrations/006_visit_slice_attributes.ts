import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 6,
  name: "visit slices carry their visit's attributes",
  // The reports group and filter visits by their attributes; read from
  // ingest.visits, a month's visits meant joining the whole table (seconds at
  // ten million page views). Each slice carries its visit's attributes (the
  // writer writes them from the visit's upsert and updates a visit's older
  // slices when an earlier row changes them), so a range reads only its
  // slices. Existing slices take them from ingest.visits, itself derived from
  // the rows. Migration 17 drops the slices.
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
         set (channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link,
             entry_page, source, country, device, browser, os, visitor_type)
           = (v.channel, v.utm_source, v.utm_medium, v.utm_campaign, v.utm_term, v.utm_content,
               v.ad_link, v.entry_page, v.source, v.country, v.device, v.browser, v.os,
               v.visitor_type)
        from ingest.visits v
       where v.site_id = s.site_id and v.visit_key = s.visit_key;
    `,
};
