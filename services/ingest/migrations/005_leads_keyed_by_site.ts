import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
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
};
