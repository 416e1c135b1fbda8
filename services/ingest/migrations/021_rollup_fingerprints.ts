import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 21,
  name: "rollup periods with the fingerprint of their declarations",
  // The fingerprint of the declarations a period was built by
  // (services/ingest/stats/rollup_fingerprint.ts): a period is current only
  // with the running code's. Periods built before have none, so they are
  // rebuilt, and answered from the rows until then.
  sql: `
      alter table ingest.rollup_periods add column fingerprint text;
    `,
};
