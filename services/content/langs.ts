/**
 * The shared `lang` rules: one code, a comma-separated list or a repeated
 * parameter; every code well formed and active; at most 50; omitted means all
 * active languages. The result is always in the site's (CRM) order, whatever
 * order the request used, so language maps come out in CRM order.
 */
import { LANGUAGE_CODE, LIMITS } from "../lib/formats.ts";

export type LanguageError =
  | { reason: "too_many_langs"; fields: { max: number } }
  | { reason: "invalid_lang"; fields: { lang: string } }
  | { reason: "unknown_lang"; fields: { lang: string; unknown: string[]; available: string[] } };

export type LanguageResult = { ok: true; langs: string[] } | { ok: false; error: LanguageError };

/**
 * @param values the raw value of each `lang` occurrence
 * @param active the site's active languages in CRM order
 */
export function resolveLanguages(
  values: readonly string[],
  active: readonly string[],
): LanguageResult {
  // A bare "lang=" is the parameter left empty: all languages, as when omitted.
  // Inside a list every item is a code and must match the format, so "en,"
  // and " en" are refused (the empty or padded code is echoed).
  if (values.every((v) => v === "")) return { ok: true, langs: [...active] };
  const codes = values.flatMap((v) => v.split(","));
  if (codes.length > LIMITS.maxLanguagesInQuery) {
    return {
      ok: false,
      error: { reason: "too_many_langs", fields: { max: LIMITS.maxLanguagesInQuery } },
    };
  }
  const malformed = codes.find((c) => !LANGUAGE_CODE.test(c));
  if (malformed !== undefined) {
    return { ok: false, error: { reason: "invalid_lang", fields: { lang: malformed } } };
  }
  const unknown = [...new Set(codes.filter((c) => !active.includes(c)))];
  if (unknown.length) {
    return {
      ok: false,
      error: {
        reason: "unknown_lang",
        fields: { lang: codes.join(","), unknown, available: [...active] },
      },
    };
  }
  const wanted = new Set(codes);
  return { ok: true, langs: active.filter((l) => wanted.has(l)) };
}

/** A language map restricted to langs, in the order of langs (CRM order). */
export function pickLanguages(
  map: Record<string, unknown> | null | undefined,
  langs: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!map) return out;
  for (const lang of langs) {
    if (Object.hasOwn(map, lang)) out[lang] = map[lang];
  }
  return out;
}
