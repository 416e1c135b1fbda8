import { describe, expect, it } from "vitest";
import { isClosedSocketWrite } from "./postgres.ts";
import { DATABASE_URL } from "../../../test/helpers/env.ts";
import { freshDatabase } from "../../../test/helpers/storage.ts";

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

describe.runIf(DATABASE_URL)("the prepare option on Postgres", () => {
  it("keeps a statement prepared on its connection only when asked", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      const prepared = await fresh.db.transaction(async (tx) => {
        await tx.query("select $1::int + 1 as plain", [1]);
        await tx.query("select $1::int + 2 as kept", [1], { prepare: true });
        return await tx.query<{ statement: string }>(
          // postgres.js prepares its own query of the array types on each connection.
          "select statement from pg_prepared_statements where statement like 'select $1%'",
        );
      });
      expect(prepared.map((p) => p.statement)).toEqual(["select $1::int + 2 as kept"]);
    } finally {
      await fresh.drop();
    }
  });
});
