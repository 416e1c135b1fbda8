import type { Migration } from "../../lib/db/migrate.ts";
import { outboxTablesSql } from "../../lib/webhooks/outbox_tables.ts";

export const migration: Migration = {
  version: 18,
  name: "webhooks and their outbox",
  // The site's webhooks (from the manifest) and the outbox of lead.created
  // messages, written by the writer's transaction (lib/webhooks/outbox.ts).
  sql: outboxTablesSql("ingest"),
};
