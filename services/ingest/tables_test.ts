import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { migrate } from "../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";
import { insertFromJson, recordOf, selectList, VISITORS, WRITTEN_TABLES } from "./tables.ts";

describe("insertFromJson", () => {
  it("names every column once, fills the null ones that have a default, and reads the record", () => {
    expect(insertFromJson(VISITORS, { onConflict: "do nothing", returning: "visitor_id" }))
      .toBe(
        [
          "insert into ingest.visitors (site_id, visitor_id, first_seen, last_seen, first_session_id)",
          "select site_id, visitor_id, first_seen, last_seen, first_session_id",
          "from json_to_recordset($1::json) as r(site_id text, visitor_id text, " +
          "first_seen timestamptz, last_seen timestamptz, first_session_id text)",
          "on conflict do nothing",
          "returning visitor_id",
        ].join("\n"),
      );
    const events = WRITTEN_TABLES.find((t) => t.name === "ingest.events")!;
    expect(insertFromJson(events)).toContain("coalesce(params, '{}'::json)");
    expect(recordOf(events, ["site_id", "value"])).toBe("r(site_id text, value bigint)");
    expect(selectList(events, ["site_id"])).toContain("value::float8 as value");
  });
});

describe.each(STORAGES)("the table descriptions on %s", (storage) => {
  let fresh: FreshDatabase;

  beforeAll(async () => {
    fresh = await freshDatabase(storage, { migrated: true });
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("match the migrated tables: every described column exists with its type", async () => {
    for (const table of WRITTEN_TABLES) {
      const [schema, name] = table.name.split(".");
      const rows = await fresh.db.query<{ column_name: string; data_type: string }>(
        `select column_name, data_type from information_schema.columns
          where table_schema = $1 and table_name = $2`,
        [schema, name],
      );
      const stored = new Map(rows.map((r) => [r.column_name, r.data_type]));
      for (const [column, { sql }] of Object.entries(table.columns)) {
        const type = sql === "timestamptz" ? "timestamp with time zone" : sql;
        expect(stored.get(column), `${table.name}.${column}`).toBe(type);
      }
    }
  });

  it("describe every column the writer must fill (all without a default)", async () => {
    for (const table of WRITTEN_TABLES) {
      const [schema, name] = table.name.split(".");
      const required = await fresh.db.query<{ column_name: string }>(
        `select column_name from information_schema.columns
          where table_schema = $1 and table_name = $2
            and is_nullable = 'NO' and column_default is null`,
        [schema, name],
      );
      for (const { column_name } of required) {
        expect(Object.keys(table.columns), table.name).toContain(column_name);
      }
    }
  });
});
