/**
 * What postgres_quirks.ts relies on in postgres.js, checked on the installed
 * postgres.js itself: these fail once postgres.js changes it, which is when
 * the quirk can go.
 */
import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { isClosedSocketWrite, sendBegin } from "./postgres_quirks.ts";
import { DATABASE_URL } from "../../../test/helpers/env.ts";
import { freshPostgresUrl } from "../../../test/helpers/storage.ts";

function errorWithStack(message: string, frame: string): TypeError {
  const error = new TypeError(message);
  error.stack = `TypeError: ${message}\n${frame}`;
  return error;
}

describe("isClosedSocketWrite", () => {
  const message = "Cannot read properties of null (reading 'write')";
  const inPostgres =
    "    at nextWrite (file:///root/.cache/deno/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)";

  it("recognises postgres.js's write on a closed connection", () => {
    expect(isClosedSocketWrite(errorWithStack(message, inPostgres))).toBe(true);
  });

  it("leaves every other error to end the process", () => {
    expect(
      isClosedSocketWrite(errorWithStack(message, "    at nextWrite (file:///app/mine.js:1:1)")),
    )
      .toBe(false);
    expect(isClosedSocketWrite(errorWithStack("x is not a function", inPostgres))).toBe(false);
    expect(isClosedSocketWrite(new Error(message))).toBe(false);
    expect(isClosedSocketWrite(undefined)).toBe(false);
  });
});

describe("postgres.js's queued write", () => {
  it("writes to its socket unguarded (porsager/postgres#1208)", async () => {
    // The module Deno runs for `import "postgres"` (its package's "import" export).
    const source = await Deno.readTextFile(
      new URL("../../../node_modules/postgres/src/connection.js", import.meta.url),
    );
    const body = /function nextWrite\(fn\) \{([\s\S]*?)\n {2}\}/.exec(source)?.[1];
    expect(body).toBeDefined();
    // The write itself, with nothing before it that looks at the socket first.
    const beforeWrite = body!.slice(0, body!.indexOf("socket.write("));
    expect(body).toContain("socket.write(");
    expect(beforeWrite).not.toMatch(/socket/);
  });
});

describe.runIf(DATABASE_URL)("BEGIN sent on a reserved connection", () => {
  it("hands BEGIN's connection over, whose close postgres.js reports once", async () => {
    const fresh = await freshPostgresUrl();
    const sql = postgres(fresh.url, { max: 2, onnotice: () => {} });
    try {
      const connection = await sql.reserve();
      const begin = sendBegin(connection);
      const [{ pid }] = await connection.unsafe("select pg_backend_pid() as pid");
      await begin.answered;
      expect(begin.lost()).toBeUndefined();
      await sql.unsafe("select pg_terminate_backend($1)", [pid]);
      const loss = await Promise.race([
        begin.closed.then(() => "resolved", (error: unknown) => error),
        new Promise((resolve) => setTimeout(() => resolve("no close in 5 s"), 5_000)),
      ]);
      expect(loss).toBeInstanceOf(Error);
      expect(begin.lost()).toBe(loss);
      begin.unwatch();
    } finally {
      await sql.end({ timeout: 1 });
      await fresh.drop();
    }
  });
});
