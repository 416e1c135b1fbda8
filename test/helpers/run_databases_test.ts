import { describe, expect, it } from "vitest";
import process from "node:process";
import { runStartOf, startRun, testDatabaseName } from "./run_databases.ts";

describe("a run's databases", () => {
  it("carry the run's start, which a later run reads back to find those left behind", () => {
    const before = process.env.CRM_TEST_RUN;
    try {
      const started = Date.UTC(2026, 10, 29, 11, 0, 0);
      const run = startRun(started);
      const name = testDatabaseName();
      expect(name.startsWith(`crm_test_${run}_`)).toBe(true);
      expect(runStartOf(name)).toBe(started);
    } finally {
      if (before === undefined) delete process.env.CRM_TEST_RUN;
      else process.env.CRM_TEST_RUN = before;
    }
  });

  it("are told from other databases, whose names give no start", () => {
    expect(runStartOf("crm_test_mx1r0u2dl1m6ab")).toBeUndefined();
    expect(runStartOf("crm_tpl_f1fb2e7fdaa08632")).toBeUndefined();
    expect(runStartOf("test")).toBeUndefined();
  });
});
