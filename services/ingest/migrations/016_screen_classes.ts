import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
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
};
