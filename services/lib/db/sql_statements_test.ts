import { describe, expect, it } from "vitest";
import { splitStatements } from "./sql_statements.ts";
import { parseConcurrentIndex } from "./concurrent_index.ts";

describe("splitStatements", () => {
  it("splits at semicolons outside strings, quoted names, comments and bodies", () => {
    const script = `
      insert into s.t values ('a;b', 'it''s; fine');
      -- a comment; with a semicolon
      create table s."odd;name" (a int); /* block; comment */
      do $body$ begin perform 1; end $body$;
      select $1::text;
    `;
    const statements = splitStatements(script);
    expect(statements.map((s) => s.text)).toEqual([
      "insert into s.t values ('a;b', 'it''s; fine')",
      `-- a comment; with a semicolon\n      create table s."odd;name" (a int)`,
      "/* block; comment */\n      do $body$ begin perform 1; end $body$",
      "select $1::text",
    ]);
  });

  it("gives each statement's code without comments and string values", () => {
    const [insert, create] = splitStatements(`
      insert into s.t values ('drop table x'); -- drop column y
      create table s."Drop" (a int) /* rename */;
    `);
    expect(insert.code).toBe("insert into s.t values ('')");
    expect(create.code).toBe('create table s."Drop" (a int)');
  });

  it("keeps what a body runs in the code", () => {
    const [body] = splitStatements("do $$ begin execute 'x'; drop table s.t; end $$;");
    expect(body.code).toContain("drop table s.t");
  });

  it("leaves out empty statements", () => {
    expect(splitStatements(" ; -- nothing\n ;")).toEqual([]);
  });
});

describe("parseConcurrentIndex", () => {
  const parse = (sql: string) => parseConcurrentIndex(splitStatements(sql)[0], "ingest");

  it("reads the name, the table and what follows", () => {
    expect(parse(
      "create unique index concurrently if not exists events_key on ingest.events (site_id, id) where name <> 'x';",
    )).toEqual({
      unique: true,
      name: "events_key",
      schema: "ingest",
      table: "events",
      definition: "(site_id, id) where name <> 'x'",
    });
    expect(parse("-- why\nCREATE INDEX CONCURRENTLY a_b ON t USING brin (at)")).toMatchObject({
      unique: false,
      name: "a_b",
      schema: "ingest",
      table: "t",
      definition: "USING brin (at)",
    });
  });

  it("is undefined for any other statement", () => {
    expect(parse("create index a on ingest.t (x)")).toBeUndefined();
    expect(parse("alter table ingest.t add column x int")).toBeUndefined();
  });

  it("refuses ON ONLY, which CONCURRENTLY cannot build", () => {
    expect(() => parse("create index concurrently a on only ingest.t (x)")).toThrow(/ON ONLY/);
  });
});
