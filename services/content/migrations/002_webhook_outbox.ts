import type { Migration } from "../../lib/db/migrate.ts";
import { outboxTablesSql } from "../../lib/webhooks/outbox_tables.ts";

export const migration: Migration = {
  version: 2,
  name: "webhooks and their outbox",
  // The site's webhooks (from the manifest) and the outbox of the messages
  // this service causes, written by the import's transaction
  // (lib/webhooks/outbox.ts); and the sites' version column, never used, goes.
  sql: outboxTablesSql("content") + `
      alter table content.sites drop column version;`,
};
