import { describe, expect, it } from "vitest";
import { ManifestError, validateManifest } from "./validate.ts";

const base = () => ({ site: { id: "shop", languages: ["en"] } });

function faultOf(extra: Record<string, unknown>): { path: string; problem: string } {
  try {
    validateManifest({ ...base(), ...extra });
  } catch (error) {
    if (error instanceof ManifestError) return { path: error.path, problem: error.problem };
    throw error;
  }
  throw new Error("manifest was accepted");
}

describe("shields in the manifest", () => {
  it("is absent unless given, and keeps what is given (countries in capitals)", () => {
    expect(validateManifest(base()).shields).toBeUndefined();
    expect(
      validateManifest({
        ...base(),
        shields: { ips: ["203.0.113.0/24", "::1"], countries: ["de"], pages: ["/admin*"] },
      }).shields,
    ).toEqual({ ips: ["203.0.113.0/24", "::1"], countries: ["DE"], pages: ["/admin*"] });
    expect(validateManifest({ ...base(), shields: {} }).shields).toEqual({
      ips: [],
      countries: [],
      pages: [],
    });
  });

  it("refuses malformed members with their path", () => {
    expect(faultOf({ shields: [] }).path).toBe("$.shields");
    expect(faultOf({ shields: { ips: ["203.0.113.0/40"] } }).path).toBe("$.shields.ips[0]");
    expect(faultOf({ shields: { countries: ["DEU"] } }).path).toBe("$.shields.countries[0]");
    expect(faultOf({ shields: { pages: ["admin"] } }).path).toBe("$.shields.pages[0]");
    const many = Array.from({ length: 101 }, (_, i) => `/p${i}`);
    expect(faultOf({ shields: { pages: many } }).path).toBe("$.shields.pages");
  });
});

describe("segments in the manifest", () => {
  it("reads names and filters, none by default", () => {
    expect(validateManifest(base()).segments).toEqual([]);
    const filters = [["is", "visit:country", ["DE"]]];
    expect(validateManifest({ ...base(), segments: [{ name: " German ", filters }] }).segments)
      .toEqual([{ name: "German", filters }]);
  });

  it("refuses an empty or long name, a repeated name, and no or too many filters", () => {
    const f = [["is", "visit:country", ["DE"]]];
    expect(faultOf({ segments: [{ name: "", filters: f }] }).path).toBe("$.segments[0].name");
    expect(faultOf({ segments: [{ name: "x".repeat(81), filters: f }] }).path)
      .toBe("$.segments[0].name");
    expect(faultOf({ segments: [{ name: "a", filters: f }, { name: "a", filters: f }] }).path)
      .toBe("$.segments[1].name");
    expect(faultOf({ segments: [{ name: "a", filters: [] }] }).path).toBe("$.segments[0].filters");
    expect(faultOf({ segments: [{ name: "a", filters: Array(11).fill(f[0]) }] }).path)
      .toBe("$.segments[0].filters");
  });
});
