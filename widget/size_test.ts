/** The widget's size budget: at most 2,000 bytes gzipped, as browsers download it. */
import { describe, expect, it } from "vitest";
import { buildWidget } from "./build.ts";
import { gzippedSize } from "../services/lib/browser_bundle.ts";

const BUDGET = 2000;

describe("widget.js", () => {
  it(`stays within ${BUDGET} bytes gzipped`, async () => {
    const bytes = await buildWidget();
    const gzipped = await gzippedSize(bytes);
    console.info(`widget.js: ${bytes.byteLength} bytes, ${gzipped} gzipped (budget ${BUDGET})`);
    expect(bytes.byteLength).toBeGreaterThan(500);
    expect(gzipped).toBeLessThanOrEqual(BUDGET);
  });

  it("is one self-contained script with no import or export left", async () => {
    const text = new TextDecoder().decode(await buildWidget());
    expect(text).not.toMatch(/^\s*(import|export)\s/m);
    expect(text).toContain("/marketing/view");
    expect(text).toContain("crm:consent");
  });
});
