import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 5,
  name: "language fallback chains",
  // site.fallbacks of the manifest: what a content request with fallback=true
  // fills a missing language from. Sites stored before have none.
  sql: `
      alter table content.sites add column fallbacks json not null default '{}';
    `,
};
