import { describe, expect, it } from "vitest";
import { pickLanguages, resolveLanguages } from "./langs.ts";

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
