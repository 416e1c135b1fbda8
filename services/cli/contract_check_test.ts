import { describe, expect, it } from "vitest";
import type { Migration } from "../lib/db/migrate.ts";
import { checkMigration, contracting } from "./contract_check.ts";
import { SCHEMAS } from "./schemas.ts";
import { type Release, RELEASES } from "./releases.ts";
import released from "./released_migrations.json" with { type: "json" };

const fingerprints: Record<string, Record<string, string>> = released;

describe("every migration no tagged release ships", () => {
  const unreleased = SCHEMAS.flatMap(({ schema, migrations }) =>
    migrations
      .filter((m) => !(String(m.version) in (fingerprints[schema] ?? {})))
      .map((migration) => ({ schema, migration }))
  );

  it("is found", () => {
    // Released ones are the fingerprinted ones; every other one is checked below.
    const all = SCHEMAS.reduce((n, s) => n + s.migrations.length, 0);
    const shipped = Object.values(fingerprints).reduce((n, f) => n + Object.keys(f).length, 0);
    expect(unreleased).toHaveLength(all - shipped);
  });

  it.each(unreleased.map((u) => [`${u.schema} ${u.migration.version}`, u] as const))(
    "%s only expands, or carries a contract marker naming a tagged release",
    (_, { schema, migration }) => {
      expect(checkMigration(schema, migration, RELEASES)).toEqual([]);
    },
  );
});

describe("the contract check", () => {
  const releases: Release[] = [{ tag: "v0.3.0", schemas: { s: 2 } }];
  const check = (sql: string, extra: Partial<Migration> = {}) =>
    checkMigration("s", { version: 3, name: "m", sql, ...extra }, releases);

  it.each([
    ["drop table s.old_visits;", "drops a table"],
    ["drop view if exists s.v;", "drops a view"],
    ["alter table s.t drop column note;", "drops a column"],
    ["alter table s.t add column b int, drop a;", "drops a column"],
    ["alter table s.t rename column a to b;", "renames"],
    ["alter table s.t rename to u;", "renames"],
    ["alter table s.t alter column a type bigint;", "changes a column's type"],
    ["alter table s.t alter a set data type text;", "changes a column's type"],
    ["alter table s.t alter column a set not null;", "makes a column NOT NULL"],
    ["alter type s.kind rename value 'a' to 'b';", "renames"],
    ["alter type s.kind drop attribute a;", "alters a type"],
    ["alter sequence s.q rename to r;", "renames"],
    ["do $$ begin perform 1; drop table s.t; end $$;", "drops a table"],
    ["do $x$ declare n int; begin alter table s.t drop column a; end $x$;", "drops a column"],
  ])("finds what %s does", (sql, what) => {
    expect(contracting(sql.replace(/;$/, ""))).toBe(what);
  });

  it.each([
    "create table s.t (a int primary key);",
    "alter table s.t add column b int;",
    "alter table s.t alter column b drop not null;",
    "alter table s.t alter column b drop default, alter column c set default 0;",
    "alter table s.t drop constraint t_check;",
    "alter type s.kind add value 'c';",
    "alter index s.i rename to j;",
    "-- drop table s.t\ninsert into s.t values ('drop table s.t');",
    "create index i on s.fresh (a);",
  ])("passes a migration that only adds: %s", (sql) => {
    const created = sql.includes("s.fresh") ? "create table s.fresh (a int);" : "";
    expect(check(created + sql)).toEqual([]);
  });

  it("fails an unmarked contract step and names the way out", () => {
    const [problem, ...rest] = check("alter table s.t add column b int; alter table s.t drop a;");
    expect(rest).toEqual([]);
    expect(problem).toMatch(/^s migration 3 \(m\) drops a column \("alter table s\.t drop a"\)/);
    expect(problem).toContain('contract: { unusedSince: "vX.Y.Z" }');
  });

  it("passes a contract step marked with a tagged release", () => {
    expect(check("drop table s.old;", { contract: { unusedSince: "v0.3.0" } })).toEqual([]);
  });

  it("fails a marker naming a release not tagged", () => {
    const problems = check("drop table s.old;", { contract: { unusedSince: "v0.4.0" } });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/names v0\.4\.0, which is no tagged release .*v0\.3\.0/);
  });

  it("fails a statement outside a transaction that cannot run twice", () => {
    const outside = { transactional: false };
    const problems = check(
      `create index concurrently t_a on s.t (a);
       create table s.u (a int);
       alter table s.t add column b int;
       create index concurrently if not exists t_b on s.t (b);
       create table if not exists s.v (a int);
       update s.t set b = a where b is null;`,
      outside,
    );
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/runs outside a transaction, .*"create index concurrently t_a/);
    expect(problems[1]).toContain('"create table s.u (a int)"');
    expect(problems[2]).toContain('"alter table s.t add column b int"');
    // The same statements in a transaction are rolled back whole: nothing to repeat.
    expect(check("create table s.u (a int); alter table s.u add column b int;")).toEqual([]);
  });

  it("fails a plain index on a table the migration does not create", () => {
    const problems = check("create index t_a on s.t (a);");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/builds an index on s\.t without CONCURRENTLY/);
    expect(check("create index concurrently if not exists t_a on s.t (a);")).toEqual([]);
  });
});
