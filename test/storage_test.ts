/** The query interface and the migrations, on PGlite and (when configured) Postgres. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "./helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "./helpers/storage.ts";
import { migrate, schemaVersion } from "../services/lib/db/migrate.ts";
import { openPostgres } from "../services/lib/db/postgres.ts";
import { authMigrations } from "../services/auth/migrations/mod.ts";
import { contentMigrations } from "../services/content/migrations/mod.ts";
import { ingestMigrations } from "../services/ingest/migrations/mod.ts";

const migrations = [
  {
    version: 1,
    name: "things",
    sql: "create table demo_m.things (id int primary key, label text not null);",
  },
  { version: 2, name: "more", sql: "alter table demo_m.things add column note text;" },
];

describe.each(STORAGES)("storage on %s", (kind) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(kind);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("runs parameterised queries and returns rows", async () => {
    const rows = await fresh.db.query<{ n: number; s: string; b: boolean; nothing: null }>(
      "select $1::int + 1 as n, $2::text as s, $3::boolean as b, $4::text as nothing",
      [41, "x", true, null],
    );
    expect(rows).toEqual([{ n: 42, s: "x", b: true, nothing: null }]);
  });

  it("reads json with its key order and timestamps as dates", async () => {
    const [row] = await fresh.db.query<{ j: Record<string, number>; t: Date }>(
      "select $1::json as j, '2026-01-10T09:00:00Z'::timestamptz as t",
      ['{"b":1,"a":2}'],
    );
    expect(Object.keys(row.j)).toEqual(["b", "a"]);
    expect(new Date(row.t).toISOString()).toBe("2026-01-10T09:00:00.000Z");
  });

  it("commits a transaction that resolves and rolls back one that throws", async () => {
    await fresh.db.exec("create table tx_probe (id int primary key)");
    await fresh.db.transaction(async (tx) => {
      await tx.query("insert into tx_probe values (1)");
    });
    await expect(fresh.db.transaction(async (tx) => {
      await tx.query("insert into tx_probe values (2)");
      throw new Error("stop");
    })).rejects.toThrow("stop");
    const rows = await fresh.db.query<{ id: number }>("select id from tx_probe order by id");
    expect(rows.map((r) => r.id)).toEqual([1]);
  });

  it("applies migrations once, in order, and records the version", async () => {
    expect(await schemaVersion(fresh.db, "demo_m")).toBe(0);
    const first = await migrate(fresh.db, "demo_m", migrations.slice(0, 1));
    expect(first).toEqual({ applied: [1], current: 1 });
    const second = await migrate(fresh.db, "demo_m", migrations);
    expect(second).toEqual({ applied: [2], current: 2 });
    const again = await migrate(fresh.db, "demo_m", migrations);
    expect(again).toEqual({ applied: [], current: 2 });
    expect(await schemaVersion(fresh.db, "demo_m")).toBe(2);
    await fresh.db.query("insert into demo_m.things (id, label, note) values (1, 'a', 'b')");
  });

  it("refuses a migration list with a gap", async () => {
    await expect(migrate(fresh.db, "demo_gap", [{ ...migrations[1] }])).rejects.toThrow(
      /expected 1/,
    );
    expect(await schemaVersion(fresh.db, "demo_gap")).toBe(0);
  });

  it("rolls back a failing migration whole, keeping the ones before it", async () => {
    const broken = [
      migrations[0],
      {
        version: 2,
        name: "broken",
        sql: "alter table demo_b.things add column x int; select * from nowhere;",
      },
    ].map((m) => ({ ...m, sql: m.sql.replaceAll("demo_m", "demo_b") }));
    await expect(migrate(fresh.db, "demo_b", broken)).rejects.toThrow();
    expect(await schemaVersion(fresh.db, "demo_b")).toBe(1);
    const columns = await fresh.db.query<{ name: string }>(
      `select column_name as name from information_schema.columns
        where table_schema = 'demo_b' and table_name = 'things' order by ordinal_position`,
    );
    expect(columns.map((c) => c.name)).toEqual(["id", "label"]);
  });

  it("applies every service's migrations", async () => {
    for (
      const [schema, list] of [["auth", authMigrations], ["content", contentMigrations], [
        "ingest",
        ingestMigrations,
      ]] as const
    ) {
      const result = await migrate(fresh.db, schema, list);
      expect(result.current).toBe(list.length);
      expect(await schemaVersion(fresh.db, schema)).toBe(list.length);
    }
  });

  if (kind === "postgres") {
    it("is safe when several replicas migrate at once", async () => {
      const replicas = await Promise.all(
        [1, 2, 3, 4].map(() => openPostgres(fresh.url!, { poolSize: 2 })),
      );
      try {
        const results = await Promise.all(
          replicas.map((db) =>
            migrate(
              db,
              "demo_c",
              migrations.map((m) => ({
                ...m,
                sql: m.sql.replaceAll("demo_m", "demo_c"),
              })),
            )
          ),
        );
        const applied = results.flatMap((r) => r.applied).sort();
        expect(applied).toEqual([1, 2]);
        expect(results.every((r) => r.current === 2)).toBe(true);
      } finally {
        await Promise.all(replicas.map((db) => db.close()));
      }
    });
  }
});
