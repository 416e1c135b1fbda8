import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 3,
  name: "when each page and section was last changed by an import",
  // The page and section indexes answer a page's or section's updatedAt from
  // its blocks, and from these when it has none. Rows already stored take the
  // migration's time: the last change known from here on.
  sql: `
      alter table content.pages add column updated_at timestamptz not null default now();
      alter table content.sections add column updated_at timestamptz not null default now();
    `,
};
