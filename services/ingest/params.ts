/**
 * Parameter normalisation, as the specification's table states it. Only
 * declared parameters are kept, in declaration order; a value its declared
 * type does not accept is not stored (the event still is).
 *
 * | declared | accepts                                    | result                                  |
 * | string   | any value                                  | cut to 500 characters; objects as JSON  |
 * | number   | finite numbers, absolute value up to 10^12 | rounded to 4 decimal places             |
 * | boolean  | true, false, "true", "false", 1, 0         | boolean                                 |
 */
import type { EventParamDef } from "../lib/manifest/types.ts";
import { cleanText, truncate } from "./text.ts";

export type ParamValue = string | number | boolean;

export const MAX_STRING_PARAM = 500;
export const MAX_NUMBER_PARAM = 1e12;

export function normalizeString(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string"
    ? value
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value);
  return truncate(cleanText(text) ?? "", MAX_STRING_PARAM);
}

export function normalizeNumber(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  if (Math.abs(value) > MAX_NUMBER_PARAM) return undefined;
  const rounded = Number(value.toFixed(4));
  // -0 would read back as 0 anyway; keep JSON and equality simple.
  return rounded === 0 ? 0 : rounded;
}

export function normalizeBoolean(value: unknown): boolean | undefined {
  if (value === true || value === "true" || value === 1) return true;
  if (value === false || value === "false" || value === 0) return false;
  return undefined;
}

const NORMALIZERS: Record<EventParamDef["type"], (value: unknown) => ParamValue | undefined> = {
  string: normalizeString,
  number: normalizeNumber,
  boolean: normalizeBoolean,
};

/** The declared parameters of `input`, each converted to its declared type. */
export function normalizeParams(
  declared: readonly EventParamDef[],
  input: Record<string, unknown>,
): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  for (const { key, type } of declared) {
    if (!Object.hasOwn(input, key)) continue;
    const value = NORMALIZERS[type](input[key]);
    if (value !== undefined) out[key] = value;
  }
  return out;
}
