/**
 * The monitoring files the chart ships are what their sources make: the
 * dashboards' JSON is what helm/dashboards.ts builds, and slo-rules.yaml is
 * what sloth makes of slos.yaml (where sloth is installed: .ci/tools.sh
 * builds it, and CI requires it). Regenerate both with `deno task monitoring`.
 */
import { describe, expect, it } from "vitest";
import { haveTools, tool } from "./helpers/tools.ts";
import { dashboardFiles, DASHBOARDS_DIR, SLO_RULES, sloRules } from "../helm/monitoring.ts";

describe("the chart's monitoring files", () => {
  it("hold the dashboards helm/dashboards.ts builds, and nothing else", () => {
    const made = dashboardFiles();
    const shipped = [...Deno.readDirSync(DASHBOARDS_DIR)].map((e) => e.name).sort();
    expect(shipped).toEqual(Object.keys(made).sort());
    for (const [name, text] of Object.entries(made)) {
      expect(
        Deno.readTextFileSync(new URL(name, DASHBOARDS_DIR)),
        `${name}: run deno task monitoring`,
      )
        .toBe(text);
    }
  });

  it.runIf(haveTools("sloth"))("hold the SLO rules sloth makes of slos.yaml", async () => {
    const made = await sloRules(tool("sloth")!);
    expect(Deno.readTextFileSync(SLO_RULES), "run deno task monitoring").toBe(made);
  });
});
