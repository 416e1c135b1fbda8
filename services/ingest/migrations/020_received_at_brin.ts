import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 20,
  name: "page views and events indexed by time alone",
  // Retention trims the month its cutoff falls in by received_at alone,
  // and every other index of these tables leads with site_id: without one
  // leading with received_at each batch read the partition from its start.
  // Rows arrive in time order, so a BRIN index (a few pages a month) finds
  // them; made on the partitioned tables, every partition has it, those
  // made later too. Built concurrently, partition by partition: these are
  // the largest tables, written while the previous release serves.
  transactional: false,
  sql: `
      create index concurrently if not exists page_views_received
        on ingest.page_views using brin (received_at);
      create index concurrently if not exists events_received
        on ingest.events using brin (received_at);
    `,
};
