import { describe, expect, it } from "vitest";
import { isClosedSocketWrite } from "./postgres.ts";

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
