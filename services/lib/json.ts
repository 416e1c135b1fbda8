/** JSON values as JSON.parse gives them. */

/** A JSON object: members by name, their values of type V. */
export type JsonObject<V = unknown> = Record<string, V>;

/** True for a JSON object: not null, not an array, not a string or number. */
export function isJsonObject<V = unknown>(value: unknown): value is JsonObject<V> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
