/**
 * Strings on their way into storage. Postgres text cannot hold NUL, and a
 * lone UTF-16 surrogate makes its JSON parser refuse the whole batch, so both
 * are removed here, once, before anything is written.
 */

/** The string without NUL characters and with lone surrogates replaced; undefined for non-strings. */
export function cleanText(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const wellFormed = value.toWellFormed();
  return wellFormed.includes("\u0000") ? wellFormed.replaceAll("\u0000", "") : wellFormed;
}

/** At most `max` characters (code points, so a surrogate pair is never split). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join("");
}

/** A cleaned, truncated, non-empty string, or null. */
export function textOrNull(value: unknown, max: number): string | null {
  const text = cleanText(value);
  if (text === undefined || text === "") return null;
  return truncate(text, max);
}
