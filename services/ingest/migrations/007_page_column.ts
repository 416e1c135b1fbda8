import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 7,
  name: "page views and events keep their page",
  // The reports' event:page is the path of a row's URL (ingest.url_path, a
  // regular expression of about 3 µs a row): most of an event:page query's
  // time at ten million page views. The insert stores it (tables.ts,
  // pageColumn). Existing rows keep null and readers fall back to the
  // function: rewriting every stored row here would hold the tables for
  // minutes on a big site, for a gain only on old ranges.
  sql: `
      alter table ingest.page_views add column page text;
      alter table ingest.events add column page text;
    `,
};
