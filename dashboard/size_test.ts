/**
 * The dashboard's size budget: dashboard.js, with Preact, its signals and
 * uPlot bundled in, at most 60 KB gzipped, as browsers download it.
 */
import { describe, expect, it } from "vitest";
import { gzippedSize } from "../services/lib/browser_bundle.ts";
import { buildDashboard, DASHBOARD_SCRIPT } from "./build.ts";

const BUDGET = 60 * 1024;

describe("dashboard.js", () => {
  it(`stays within ${BUDGET} bytes gzipped with its libraries`, async () => {
    await buildDashboard();
    const bytes = await Deno.readFile(DASHBOARD_SCRIPT);
    const gzipped = await gzippedSize(bytes);
    console.info(`dashboard.js: ${bytes.byteLength} bytes, ${gzipped} gzipped (budget ${BUDGET})`);
    const text = new TextDecoder().decode(bytes);
    // The libraries are in it (a build that left them out would pass the budget for nothing).
    expect(text).toContain("uplot");
    expect(text).toContain("/stats/v1/query");
    expect(text).not.toMatch(/^\s*(import|export)\s/m);
    expect(gzipped).toBeLessThanOrEqual(BUDGET);
  });
});
