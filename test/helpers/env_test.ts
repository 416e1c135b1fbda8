import { describe, expect, it } from "vitest";
import { systemStorages } from "./env.ts";

describe("the storages a test of the whole system runs on", () => {
  it("is one by default: Postgres when configured, else PGlite", () => {
    expect(systemStorages(undefined, ["pglite", "postgres"])).toEqual(["postgres"]);
    expect(systemStorages("one", ["pglite", "postgres"])).toEqual(["postgres"]);
    expect(systemStorages(undefined, ["pglite"])).toEqual(["pglite"]);
  });

  it("is the others or all of them when asked, so two runs together cover both", () => {
    const storages: ("pglite" | "postgres")[] = ["pglite", "postgres"];
    const one = systemStorages(undefined, storages);
    const others = systemStorages("others", storages);
    expect(others).toEqual(["pglite"]);
    expect([...others, ...one].sort()).toEqual(storages);
    expect(systemStorages("others", ["pglite"])).toEqual([]);
    expect(systemStorages("all", storages)).toEqual(storages);
  });

  it("refuses a setting it does not know", () => {
    expect(() => systemStorages("both", ["pglite"])).toThrow(/CRM_TEST_STORAGES/);
  });
});
