import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import type { Queryable } from "../db/mod.ts";
import { migrate } from "../db/migrate.ts";
import { CONTENT_SCHEMA, contentMigrations } from "../../content/migrations/mod.ts";
import { INGEST_SCHEMA, ingestMigrations } from "../../ingest/migrations/mod.ts";
import { outboxTablesSql } from "./outbox_tables.ts";

const OUTBOX_TABLES = ["webhooks", "webhook_messages", "webhook_deliveries", "webhook_attempts"];

/**
 * The outbox's tables in `schema` as the catalog holds them: columns (type,
 * nullability, default, identity), constraints and indexes, with the schema's
 * name taken out so that two schemas compare.
 */
async function outboxShape(db: Queryable, schema: string): Promise<string[]> {
  const columns = await db.query<{ line: string }>(
    `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
            coalesce(column_default, '-') || ' ' || is_identity || ' ' ||
            coalesce(identity_generation, '-') as line
       from information_schema.columns
      where table_schema = $1 and table_name = any($2::text[])`,
    [schema, `{${OUTBOX_TABLES.join(",")}}`],
  );
  const constraints = await db.query<{ line: string }>(
    `select c.conrelid::regclass::text || ' ' || c.conname || ' ' ||
            pg_get_constraintdef(c.oid) as line
       from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where n.nspname = $1 and c.conrelid::regclass::text like $1 || '.webhook%'`,
    [schema],
  );
  const indexes = await db.query<{ line: string }>(
    `select indexdef as line from pg_indexes
      where schemaname = $1 and tablename = any($2::text[])`,
    [schema, `{${OUTBOX_TABLES.join(",")}}`],
  );
  return [...columns, ...constraints, ...indexes]
    .map(({ line }) => line.replaceAll(`${schema}.`, "S."))
    .sort();
}

describe.each(STORAGES)("the webhook outbox's tables on %s", (storage) => {
  let fresh: FreshDatabase;

  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    await migrate(fresh.db, CONTENT_SCHEMA, contentMigrations);
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
    await fresh.db.exec(`create schema outbox_alone; ${outboxTablesSql("outbox_alone")}`);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("are the same in content's and ingest's migrated schemas, as their one definition makes them", async () => {
    const content = await outboxShape(fresh.db, CONTENT_SCHEMA);
    const ingest = await outboxShape(fresh.db, INGEST_SCHEMA);
    const alone = await outboxShape(fresh.db, "outbox_alone");
    // Every table, its columns, keys and indexes: not an empty match.
    for (const table of OUTBOX_TABLES) {
      expect(content.some((line) => line.startsWith(`${table}.`)), table).toBe(true);
    }
    expect(content.filter((line) => line.startsWith("CREATE INDEX")).length).toBe(6);
    expect(content.some((line) => line.includes("FOREIGN KEY"))).toBe(true);
    expect(ingest).toEqual(content);
    expect(alone).toEqual(content);
  });

  it("are made by both schemas' migrations from that definition", () => {
    const content = contentMigrations.find((m) => m.sql.includes("content.webhook_messages"));
    const ingest = ingestMigrations.find((m) => m.sql.includes("ingest.webhook_messages"));
    expect(content?.sql).toContain(outboxTablesSql(CONTENT_SCHEMA));
    expect(ingest?.sql).toContain(outboxTablesSql(INGEST_SCHEMA));
  });
});
