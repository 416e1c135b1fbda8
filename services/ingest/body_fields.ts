/**
 * Reading request bodies field by field: long names and their aliases, and
 * the refusal a server caller receives (`invalid_body` naming the field).
 */
import { cleanText } from "./text.ts";
import { cleanUrl } from "./url_clean.ts";

export interface Refusal {
  reason: string;
  fields?: Record<string, unknown>;
}

export class RefusedError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.reason);
  }
}

export function invalidBody(field: string, problem: string): RefusedError {
  return new RefusedError({ reason: "invalid_body", fields: { field, problem } });
}

export type Body = Record<string, unknown>;

export function isObject(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first of the names present in the body (the long name wins over its aliases). */
export function pick(body: Body, names: readonly string[]): { name: string; value: unknown } {
  for (const name of names) {
    if (Object.hasOwn(body, name) && body[name] !== undefined) {
      return { name, value: body[name] };
    }
  }
  return { name: names[0], value: undefined };
}

/** Longest visitor, session, event and lead id. */
export const MAX_ID = 128;
/** Longest URL kept (after cleaning); longer ones are cut. */
export const MAX_URL = 2048;

/** An optional id: a string of 1 to 128 characters, or absent/null. */
export function optionalId(body: Body, names: readonly string[]): string | null {
  const { name, value } = pick(body, names);
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalidBody(name, "must be a string");
  const text = cleanText(value)!;
  if (text.length === 0 || text.length > MAX_ID) {
    throw invalidBody(name, `must have 1 to ${MAX_ID} characters`);
  }
  return text;
}

/** A visitor or session id: like optionalId, but an empty string means none. */
export function optionalBrowserId(body: Body, names: readonly string[]): string | null {
  const { value } = pick(body, names);
  if (value === "") return null;
  return optionalId(body, names);
}

/** An optional URL, cleaned of fragment and sensitive parameters. */
export function optionalUrl(body: Body, names: readonly string[]): string | null {
  const { name, value } = pick(body, names);
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalidBody(name, "must be a string");
  const cleaned = cleanUrl(cleanText(value)!);
  return cleaned === null ? null : cleaned.slice(0, MAX_URL);
}
