import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 2,
  name: "report keys",
  // A report key (rk_ + 48 hex) reads the reports of its one site.
  sql: `
      alter table auth.keys drop constraint keys_kind_check;
      alter table auth.keys add constraint keys_kind_check
        check (kind in ('site', 'secret', 'report'));
    `,
};
