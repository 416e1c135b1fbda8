/**
 * Reading the typed fields of a request (the gateway mapped the JSON body and
 * its aliases to them once) by the rules of each field, and the refusal a
 * server caller receives: `invalid_body` naming the field as the caller sent
 * it (an alias when it used one).
 */
import {
  JsonType,
  type JsonValue,
  type Members,
  type TextField,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { cleanText } from "./text.ts";
import { cleanUrl } from "./url_clean.ts";

export type Refusal =
  | { reason: "invalid_body"; fields?: { field: string; problem: string } }
  | { reason: "invalid_event_name"; fields?: undefined }
  | { reason: "unknown_event"; fields: { name: string } };

export class RefusedError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.reason);
  }
}

export function invalidBody(field: string, problem: string): RefusedError {
  return new RefusedError({ reason: "invalid_body", fields: { field, problem } });
}

/** Whether a field was left out or sent as null: both mean "not given" to every optional field. */
export function isAbsent(
  field: { value: { case: string | undefined; value?: unknown } } | undefined,
): boolean {
  return !field || field.value.case === undefined ||
    (field.value.case === "other" && field.value.value === JsonType.NULL);
}

/** An optional text: its text, null when not given, else a refusal naming the field. */
export function optionalText(field: TextField | undefined): string | null {
  if (isAbsent(field)) return null;
  if (field!.value.case !== "text") throw invalidBody(field!.key, "must be a string");
  return field!.value.value;
}

/** Longest visitor, session, event and lead id. */
export const MAX_ID = 128;
/** Longest URL kept (after cleaning); longer ones are cut. */
export const MAX_URL = 2048;

/** An id's text, cleaned; null unless it has 1 to 128 characters. */
export function cleanId(text: string): string | null {
  const cleaned = cleanText(text)!;
  return cleaned.length === 0 || cleaned.length > MAX_ID ? null : cleaned;
}

/** An optional id: a string of 1 to 128 characters, or not given. */
export function optionalId(field: TextField | undefined): string | null {
  const value = optionalText(field);
  if (value === null) return null;
  const id = cleanId(value);
  if (id === null) throw invalidBody(field!.key, `must have 1 to ${MAX_ID} characters`);
  return id;
}

/** A visitor or session id: like optionalId, but an empty string means none. */
export function optionalBrowserId(field: TextField | undefined): string | null {
  if (field?.value.case === "text" && field.value.value === "") return null;
  return optionalId(field);
}

/** An optional URL, cleaned of fragment and sensitive parameters. */
export function optionalUrl(field: TextField | undefined): string | null {
  const value = optionalText(field);
  if (value === null || value === "") return null;
  const cleaned = cleanUrl(cleanText(value)!);
  return cleaned === null ? null : cleaned.slice(0, MAX_URL);
}

/** A member's value as the JSON value it was: objects and arrays are read back from their text. */
export function plainValue(value: JsonValue | undefined): unknown {
  const kind = value?.kind;
  switch (kind?.case) {
    case "boolValue":
    case "numberValue":
    case "stringValue":
      return kind.value;
    case "jsonText":
      return JSON.parse(kind.value);
    default:
      return null;
  }
}

/** An object field's members as the JSON object sent (`key` names it in a refusal). */
export function plainObject(key: string, members: Members): Record<string, unknown> {
  try {
    return Object.fromEntries(members.members.map((m) => [m.key, plainValue(m.value)]));
  } catch {
    // Only a caller other than the gateway can send text that is not JSON.
    throw invalidBody(key, "must be an object");
  }
}
