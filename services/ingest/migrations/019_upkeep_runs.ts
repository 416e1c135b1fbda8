import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 19,
  name: "the last success of each upkeep job",
  // When retention last succeeded (by the run's clock), for the gauge
  // crm.ingest.retention.last_success: every ingest process reads it, so a
  // stale run is seen whichever replica ran the last one, across restarts.
  sql: `
      create table ingest.upkeep_runs (
        job text primary key,
        last_success_at timestamptz not null
      );
    `,
};
