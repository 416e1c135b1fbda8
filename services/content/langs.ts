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

/**
 * Requested languages that, with fallback=true, also carry each language's
 * chain along site.fallbacks: the languages to take a missing value from, in
 * order. Still the list of languages everywhere one is expected.
 */
export type RequestedLanguages = readonly string[] & {
  readonly chains?: ReadonlyMap<string, readonly string[]>;
};

/** The languages with each one's fallback chain (site.fallbacks has no cycle; guarded anyway). */
export function withFallbacks(
  langs: readonly string[],
  fallbacks: Readonly<Record<string, string>>,
): RequestedLanguages {
  const chains = new Map<string, string[]>();
  for (const lang of langs) {
    const chain: string[] = [];
    for (let next = fallbacks[lang]; next !== undefined; next = fallbacks[next]) {
      if (next === lang || chain.includes(next)) break;
      chain.push(next);
    }
    if (chain.length) chains.set(lang, chain);
  }
  return Object.assign([...langs], { chains });
}

/**
 * A language map restricted to langs, in the order of langs (CRM order). A
 * language the map lacks (`has` says which values count) takes the value of
 * the first language along its fallback chain that has one, when langs
 * carry chains.
 */
export function pickLanguages(
  map: Record<string, unknown> | null | undefined,
  langs: RequestedLanguages,
  has: (value: unknown) => boolean = () => true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!map) return out;
  const present = (lang: string) => Object.hasOwn(map, lang) && has(map[lang]);
  for (const lang of langs) {
    if (present(lang)) {
      out[lang] = map[lang];
      continue;
    }
    const from = langs.chains?.get(lang)?.find(present);
    if (from !== undefined) out[lang] = map[from];
  }
  return out;
}
