import { describe, expect, it } from "vitest";
import { normalizeBoolean, normalizeNumber, normalizeParams, normalizeString } from "./params.ts";

describe("parameter normalisation", () => {
  it("string: any value, cut to 500 characters, objects as JSON", () => {
    expect(normalizeString("x".repeat(600))).toHaveLength(500);
    expect(normalizeString("😀".repeat(501))).toBe("😀".repeat(500));
    expect(normalizeString({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(normalizeString([1, "b"])).toBe('[1,"b"]');
    expect(normalizeString(42.5)).toBe("42.5");
    expect(normalizeString(true)).toBe("true");
    expect(normalizeString("a\u0000b")).toBe("ab");
    expect(normalizeString(null)).toBeUndefined();
  });

  it("number: finite, up to 10^12 in absolute value, rounded to 4 decimals", () => {
    expect(normalizeNumber(3.14159265)).toBe(3.1416);
    expect(normalizeNumber(-2.00004)).toBe(-2);
    expect(normalizeNumber(1e12)).toBe(1e12);
    expect(normalizeNumber(-1e12)).toBe(-1e12);
    expect(normalizeNumber(1e12 + 1)).toBeUndefined();
    expect(normalizeNumber(Number.NaN)).toBeUndefined();
    expect(normalizeNumber(Infinity)).toBeUndefined();
    expect(normalizeNumber("12")).toBeUndefined();
  });

  it("boolean: true, false, their strings, 1 and 0", () => {
    expect([true, "true", 1].map(normalizeBoolean)).toEqual([true, true, true]);
    expect([false, "false", 0].map(normalizeBoolean)).toEqual([false, false, false]);
    expect(["yes", 2, null, "TRUE"].map(normalizeBoolean)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("keeps declared parameters only, in declaration order, dropping refused values", () => {
    const declared = [
      { key: "plan", type: "string" as const },
      { key: "seats", type: "number" as const },
      { key: "trial", type: "boolean" as const },
      { key: "missing", type: "string" as const },
    ];
    const out = normalizeParams(declared, {
      trial: "false",
      extra: "dropped",
      seats: "not a number",
      plan: { tier: "pro" },
    });
    expect(out).toEqual({ plan: '{"tier":"pro"}', trial: false });
    expect(Object.keys(out)).toEqual(["plan", "trial"]);
  });
});
