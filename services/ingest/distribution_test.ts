/**
 * The analytics tables can be spread over many Postgres nodes by site
 * (Citus's distribution column, docs/benchmarks.md "Scale on paper"): that
 * needs every primary key and unique key to contain site_id, and every key
 * leading with it keeps a site's rows together on one node and its lookups
 * on one shard. Read from the catalog after the migrations ran, so a new
 * table or index is checked without being listed here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";
import { migrate } from "../lib/db/migrate.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";

/**
 * Bookkeeping of the installation, not of a site: the migrations (a row per
 * version), the background backfills' progress (a row per backfill) and the
 * upkeep jobs' last successes (a row per job).
 */
const NOT_ANALYTICS = new Set(["schema_migrations", "backfills", "upkeep_runs"]);

interface Key {
  table: string;
  index: string;
  columns: string[];
  primary: boolean;
}

describe("the analytics tables distribute by site_id", () => {
  let fresh: FreshDatabase;
  let keys: Key[];

  beforeAll(async () => {
    fresh = await freshDatabase("pglite");
    await migrate(fresh.db, INGEST_SCHEMA, ingestMigrations);
    // Every unique index (primary keys included) on the schema's tables,
    // partitioned parents included, with its key columns in order.
    const rows = await fresh.db.query<
      { table_name: string; index_name: string; columns: string; primary_key: boolean }
    >(
      `select t.relname as table_name, i.relname as index_name, x.indisprimary as primary_key,
              (select string_agg(a.attname, ',' order by k.n)
                 from unnest(x.indkey::int2[]) with ordinality as k(attnum, n)
                 join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
                where k.n <= x.indnkeyatts) as columns
         from pg_index x
         join pg_class t on t.oid = x.indrelid
         join pg_class i on i.oid = x.indexrelid
         join pg_namespace s on s.oid = t.relnamespace
        where s.nspname = $1 and x.indisunique and t.relkind in ('r', 'p')`,
      [INGEST_SCHEMA],
    );
    keys = rows.filter((r) => !NOT_ANALYTICS.has(r.table_name)).map((r) => ({
      table: r.table_name,
      index: r.index_name,
      columns: (r.columns ?? "").split(","),
      primary: r.primary_key,
    }));
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("finds the keys it checks", () => {
    const tables = new Set(keys.map((k) => k.table));
    for (const table of ["sites", "event_types", "event_ids", "visitors", "sessions", "leads"]) {
      expect(tables, table).toContain(table);
    }
    expect(keys.some((k) => k.index === "leads_lead_id")).toBe(true);
  });

  it("leads every primary key and unique key with site_id", () => {
    const offending = keys.filter((k) => k.columns[0] !== "site_id")
      .map((k) => `${k.table}.${k.index} (${k.columns.join(", ")})`);
    expect(offending).toEqual([]);
  });

  it("has no table without a primary key but page views and events (no key, partitioned)", async () => {
    const tables = await fresh.db.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace s on s.oid = c.relnamespace
        where s.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition
          and not exists (select 1 from pg_index x where x.indrelid = c.oid and x.indisprimary)
        order by 1`,
      [INGEST_SCHEMA],
    );
    expect(tables.map((t) => t.name)).toEqual(["events", "page_views"]);
  });

  it("keeps the leads stored before their key gained site_id", async () => {
    const db = (await freshDatabase("pglite")).db;
    try {
      const rekey = ingestMigrations.find((m) => m.name === "leads keyed by site")!.version;
      await migrate(db, INGEST_SCHEMA, ingestMigrations.filter((m) => m.version < rekey));
      await db.query(
        `insert into ingest.leads (id, site_id, received_at, source, fields)
         values ('9b2f6c1e-0d1a-4c55-8f7e-3a9c1b2d4e5f', 'site-a', now(), 'server', '{}')`,
      );
      await migrate(db, INGEST_SCHEMA, ingestMigrations);
      const rows = await db.query<{ id: string; site_id: string }>(
        "select id::text as id, site_id from ingest.leads",
      );
      expect(rows).toEqual([{ id: "9b2f6c1e-0d1a-4c55-8f7e-3a9c1b2d4e5f", site_id: "site-a" }]);
    } finally {
      await db.close();
    }
  });
});
