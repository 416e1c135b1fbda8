import { describe, expect, it } from "vitest";
import { findTool } from "../../.ci/tools.ts";

describe("findTool", () => {
  it("finds a tool on PATH and refuses a name that is nowhere", () => {
    expect(findTool("sh")).toMatch(/\/sh$/);
    expect(findTool("no-such-tool-crm-test")).toBeUndefined();
  });
});
