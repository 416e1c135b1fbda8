import { describe, expect, it } from "vitest";
import { pickLanguages, resolveLanguages, withFallbacks } from "./langs.ts";

const active = ["en", "de", "pt-BR"];

describe("resolveLanguages", () => {
  it("defaults to every active language", () => {
    expect(resolveLanguages([], active)).toEqual({ ok: true, langs: active });
    expect(resolveLanguages([""], active)).toEqual({ ok: true, langs: active });
  });

  it("accepts one code, a comma list or repeated values, in CRM order", () => {
    expect(resolveLanguages(["de"], active)).toEqual({ ok: true, langs: ["de"] });
    expect(resolveLanguages(["pt-BR,en"], active)).toEqual({ ok: true, langs: ["en", "pt-BR"] });
    expect(resolveLanguages(["de", "en"], active)).toEqual({ ok: true, langs: ["en", "de"] });
    expect(resolveLanguages(["en,en"], active)).toEqual({ ok: true, langs: ["en"] });
  });

  it("refuses malformed codes with the offending value", () => {
    for (const bad of ["EN", "en_US", "eng", "english", "e", "en-", "en-abcde"]) {
      expect(resolveLanguages([`de,${bad}`], active)).toEqual({
        ok: false,
        error: { reason: "invalid_lang", fields: { lang: bad } },
      });
    }
  });

  it("refuses empty and padded items of a list, echoing them", () => {
    const cases: [values: string[], bad: string][] = [
      [["en,"], ""],
      [["en,,de"], ""],
      [[" en"], " en"],
      [["en", ""], ""],
      [["en\t"], "en\t"],
    ];
    for (const [values, bad] of cases) {
      expect(resolveLanguages(values, active)).toEqual({
        ok: false,
        error: { reason: "invalid_lang", fields: { lang: bad } },
      });
    }
  });

  it("refuses inactive codes listing the unknown and the available ones", () => {
    expect(resolveLanguages(["en,fr", "it"], active)).toEqual({
      ok: false,
      error: {
        reason: "unknown_lang",
        fields: { lang: "en,fr,it", unknown: ["fr", "it"], available: active },
      },
    });
  });

  it("is case-sensitive in the region part only through the active list", () => {
    expect(resolveLanguages(["pt-br"], active).ok).toBe(false);
  });

  it("allows 50 codes and refuses 51", () => {
    const fifty = Array.from({ length: 50 }, () => "en").join(",");
    expect(resolveLanguages([fifty], active)).toEqual({ ok: true, langs: ["en"] });
    expect(resolveLanguages([fifty + ",de"], active)).toEqual({
      ok: false,
      error: { reason: "too_many_langs", fields: { max: 50 } },
    });
  });
});

describe("pickLanguages", () => {
  it("keeps the requested languages in the given order and drops absent ones", () => {
    expect(pickLanguages({ de: "Hallo", en: "Hello", fr: "Salut" }, ["en", "de"])).toEqual({
      en: "Hello",
      de: "Hallo",
    });
    expect(Object.keys(pickLanguages({ de: "Hallo", en: "Hello" }, ["en", "de"]))).toEqual([
      "en",
      "de",
    ]);
    expect(pickLanguages({ en: "" }, ["en", "de"])).toEqual({ en: "" });
    expect(pickLanguages(null, ["en"])).toEqual({});
  });
});

describe("fallback chains", () => {
  const fallbacks = { "de-AT": "de", de: "en" };

  it("fills a missing language from the first along its chain that has a value", () => {
    const langs = withFallbacks(["en", "de", "de-AT", "fr"], fallbacks);
    expect(langs.chains?.get("de-AT")).toEqual(["de", "en"]);
    expect(pickLanguages({ en: "Hi" }, langs)).toEqual({ en: "Hi", de: "Hi", "de-AT": "Hi" });
    expect(pickLanguages({ en: "Hi", de: "Hallo" }, langs)).toEqual({
      en: "Hi",
      de: "Hallo",
      "de-AT": "Hallo",
    });
    // Without chains, absent stays absent.
    expect(pickLanguages({ en: "Hi" }, ["de-AT"])).toEqual({});
  });

  it("skips values the caller does not count, and never loops", () => {
    const langs = withFallbacks(["de-AT"], fallbacks);
    const filled = (v: unknown) => typeof v === "string" && v.trim() !== "";
    expect(pickLanguages({ "de-AT": "", de: " ", en: "Hi" }, langs, filled))
      .toEqual({ "de-AT": "Hi" });
    const looping = withFallbacks(["a"], { a: "b", b: "a" });
    expect(looping.chains?.get("a")).toEqual(["b"]);
  });
});
