import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 15,
  name: "a visit without a session lives in its slice alone",
  // A row without a session is a visit of its own: its first and last time
  // and its attributes are the row's, and its one slice holds them all, so it
  // has no row in ingest.visits, which would cost the writer an upsert per
  // server event and say nothing more. This deletes such rows.
  sql: "delete from ingest.visits where visit_key like 'r%';",
};
