/**
 * openapi.json and src/schema.ts are what `deno task openapi` writes from the
 * gateway's document: a change of the document without regenerating fails here.
 */
import { describe, expect, it } from "vitest";
import { DOCUMENT_FILE, documentText, TYPES_FILE, typesText } from "../generate.ts";

describe("the client's generated files", () => {
  it("hold the gateway's current OpenAPI document", async () => {
    expect(await Deno.readTextFile(DOCUMENT_FILE)).toBe(documentText());
  });

  it("hold the types openapi-typescript makes of it", async () => {
    expect(await Deno.readTextFile(TYPES_FILE)).toBe(await typesText());
  });
});
