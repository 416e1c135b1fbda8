import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 4,
  name: "preview keys",
  // A preview key (pv_ + 32 hex) reads the content API of its one site,
  // drafts and scheduled posts included.
  sql: `
      alter table auth.keys drop constraint keys_kind_check;
      alter table auth.keys add constraint keys_kind_check
        check (kind in ('site', 'secret', 'report', 'preview'));
    `,
};
