/**
 * Every service's schema and its migrations, in the order a deployment
 * migrates them (`admin migrate --database`).
 */
import type { Migration } from "../lib/db/migrate.ts";
import { AUTH_SCHEMA, authMigrations } from "../auth/migrations/mod.ts";
import { CONTENT_SCHEMA, contentMigrations } from "../content/migrations/mod.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../ingest/migrations/mod.ts";

export interface ServiceSchema {
  /** The service that owns the schema. */
  service: "auth" | "content" | "ingest";
  schema: string;
  migrations: readonly Migration[];
}

export const SCHEMAS: readonly ServiceSchema[] = [
  { service: "auth", schema: AUTH_SCHEMA, migrations: authMigrations },
  { service: "content", schema: CONTENT_SCHEMA, migrations: contentMigrations },
  { service: "ingest", schema: INGEST_SCHEMA, migrations: ingestMigrations },
];
