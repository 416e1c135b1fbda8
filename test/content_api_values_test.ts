/**
 * Content API values through the real path (gateway → auth-service →
 * content-service), on every storage: the shapes of pages, sections and
 * blocks, block content by type, the language rules and identifier formats.
 * Every expectation comes from test/fixtures/content-api-site.json.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  acmeSite,
  type Answer,
  call,
  type CallOptions,
  ERROR_HEADERS,
  errorHeaders,
  type Json,
} from "./helpers/content.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

describe.each(SYSTEM_STORAGES)("content API values on %s", (storage) => {
  let sys: TestSystem;
  let manifest: Json;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  const ok = async (path: string) => {
    const answer = await get(path);
    expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    return answer.body;
  };
  const expectError = (answer: Answer, status: number, body: Json) => {
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual(body);
    expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
  };

  beforeAll(async () => {
    manifest = await acmeSite();
    sys = await startTestSystem({ storage, seed: manifest });
  });
  afterAll(async () => {
    await sys?.close();
  });

  const heroBlock = (marker: string) =>
    manifest.pages[0].sections[0].blocks.find((b: Json) => b.marker === marker);

  describe("block fields", () => {
    it("has id, marker, name, type, multilang, updatedAt and content, and nothing else", async () => {
      const block = await ok("/content/v1/blocks/title");
      expect(Object.keys(block).sort()).toEqual(
        ["content", "id", "marker", "multilang", "name", "type", "updatedAt"],
      );
      expect(block).toMatchObject({ marker: "title", name: "Headline", type: "text" });
      expect(typeof block.id).toBe("number");
      expect(block.multilang).toBe(false);
      expect(block.updatedAt).toMatch(ISO);
      expect(Date.now() - Date.parse(block.updatedAt)).toBeLessThan(10 * 60_000);
    });

    it("answers the block object without a wrapper, for every type", async () => {
      for (const def of manifest.pages[0].sections[0].blocks) {
        const block = await ok(`/content/v1/blocks/${def.marker}?section=hero`);
        expect(block.marker).toBe(def.marker);
        expect(block.type).toBe(def.type);
        expect(block.name).toBe(def.name);
        expect(block.multilang).toBe(def.multilang ?? false);
        expect(block).not.toHaveProperty("fields");
      }
    });
  });

  describe("block content by type", () => {
    const content = async (marker: string, query = "") =>
      (await ok(`/content/v1/blocks/${marker}?section=hero${query}`)).content;

    it("text and html: a map in CRM order whatever order the manifest stored", async () => {
      const title = await content("title");
      expect(title).toEqual({ en: "Hello", de: "Hallo", "pt-BR": "Olá" });
      expect(Object.keys(title)).toEqual(["en", "de", "pt-BR"]);
      const intro = await content("intro");
      expect(Object.keys(intro)).toEqual(["en", "de"]);
      expect(intro.en).toBe("<p>Welcome <b>home</b></p>");
    });

    it("text: an absent language is absent, a blank one is the empty string", async () => {
      expect(await content("subtitle")).toEqual({ en: "Tools for makers", de: "" });
      expect(await content("subtitle", "&lang=de")).toEqual({ de: "" });
      expect(await content("subtitle", "&lang=pt-BR")).toEqual({});
    });

    it("text without any saved value: null", async () => {
      expect(await content("empty_text")).toBeNull();
      expect(await content("empty_text", "&lang=en")).toBeNull();
    });

    it("image and video: an object with file, or a map of URLs when multilang", async () => {
      expect(await content("cover")).toEqual({ file: "https://cdn.example/cover.png" });
      expect(await content("cover", "&lang=de")).toEqual({ file: "https://cdn.example/cover.png" });
      expect(await content("clip")).toEqual({ file: "https://cdn.example/clip.mp4" });
      const banner = await ok("/content/v1/blocks/banner");
      expect(banner.multilang).toBe(true);
      expect(banner.content).toEqual({
        en: "https://cdn.example/banner-en.png",
        de: "https://cdn.example/banner-de.png",
      });
      expect(Object.keys(banner.content)).toEqual(["en", "de"]);
      expect(await content("banner", "&lang=de")).toEqual({
        de: "https://cdn.example/banner-de.png",
      });
      expect(await content("clip_ml")).toEqual({
        en: "https://cdn.example/clip-en.mp4",
        "pt-BR": "https://cdn.example/clip-pt.mp4",
      });
      expect(await content("clip_ml", "&lang=de")).toEqual({});
    });

    it("link: url, target and a title map filtered by lang", async () => {
      expect(await content("cta")).toEqual({
        url: "/signup",
        target: "_blank",
        title: { en: "Join", de: "Mitmachen" },
      });
      expect(Object.keys((await content("cta")).title)).toEqual(["en", "de"]);
      expect(await content("cta", "&lang=de,pt-BR")).toEqual({
        url: "/signup",
        target: "_blank",
        title: { de: "Mitmachen" },
      });
    });

    it("number, color, date, boolean: the raw value, whatever lang asks", async () => {
      for (const lang of ["", "&lang=de", "&lang=pt-BR,en"]) {
        expect(await content("price", lang)).toBe(42.5);
        expect(await content("accent", lang)).toBe("#ff8800");
        expect(await content("launch", lang)).toBe("2026-03-01");
        expect(await content("featured", lang)).toBe(true);
        expect(await content("archived", lang)).toBe(false);
      }
      expect(await content("no_price")).toBeNull();
    });

    it("date_range: the raw stored value, or null when empty", async () => {
      expect(await content("campaign", "&lang=de")).toEqual(heroBlock("campaign").content);
      expect(await content("no_range")).toBeNull();
    });

    it("object: field values by the standalone rules, never field definitions", async () => {
      expect(await content("card")).toEqual({
        caption: { en: "Card", de: "", "pt-BR": "Cartão" },
        photo: { file: "https://cdn.example/card.png" },
        poster: {
          en: "https://cdn.example/poster-en.png",
          de: "https://cdn.example/poster-de.png",
        },
        more: { url: "/more", target: "_self", title: { en: "More", "pt-BR": "Mais" } },
        count: 3,
      });
      const de = await content("card", "&lang=de");
      expect(de).toEqual({
        caption: { de: "" },
        photo: { file: "https://cdn.example/card.png" },
        poster: { de: "https://cdn.example/poster-de.png" },
        more: { url: "/more", target: "_self", title: {} },
        count: 3,
      });
      expect(Object.keys((await content("card")).caption)).toEqual(["en", "de", "pt-BR"]);
      const block = await ok("/content/v1/blocks/card");
      expect(JSON.stringify(block)).not.toContain('"fields"');
    });

    it("array: an array of such objects", async () => {
      expect(await content("items", "&lang=pt-BR,de")).toEqual([
        { label: { de: "Eins" }, icon: { file: "https://cdn.example/1.svg" }, on: true },
        {
          label: { de: "Zwei", "pt-BR": "Dois" },
          icon: { file: "https://cdn.example/2.svg" },
          on: false,
        },
      ]);
      const all = await content("items");
      expect(Object.keys(all[1].label)).toEqual(["en", "de", "pt-BR"]);
    });
  });

  describe("section and page shapes", () => {
    it("section: content keyed by block marker, each entry a block, with show", async () => {
      const section = await ok("/content/v1/sections/hero");
      expect(section.show).toBe(true);
      expect(Object.keys(section.content)).toEqual(
        manifest.pages[0].sections[0].blocks.map((b: Json) => b.marker),
      );
      expect(section.content.title).toEqual(await ok("/content/v1/blocks/title?section=hero"));
      expect(section.content.cta.content.title).toEqual({ en: "Join", de: "Mitmachen" });
    });

    it("a section with show false is still returned", async () => {
      const promo = await ok("/content/v1/sections/promo");
      expect(promo.show).toBe(false);
      expect(promo.content.title.content).toEqual({ en: "Hidden promo" });
      expect((await ok("/content/v1/pages/home")).content.promo.show).toBe(false);
    });

    it("sections outside any page, and an empty one", async () => {
      const footer = await ok("/content/v1/sections/footer");
      expect(Object.keys(footer.content)).toEqual(["copyright", "note"]);
      expect(await ok("/content/v1/sections/empty_section")).toMatchObject({
        show: true,
        content: {},
      });
    });

    it("page: content keyed by section marker, reaching text as content.s.content.b.content.lang", async () => {
      const page = await ok("/content/v1/pages/home");
      expect(Object.keys(page.content)).toEqual(["hero", "promo"]);
      expect(page.content.hero.content.title.content.de).toBe("Hallo");
      expect(page.content.hero).toEqual(await ok("/content/v1/sections/hero"));
      expect(page.href).toBe("/");
      const about = await ok("/content/v1/pages/about_us");
      expect(about.href).toBe("/about");
      expect(about.content.team.content.Lead_Text.content).toEqual({ en: "We build tools." });
    });

    it("a page's href is not its marker", async () => {
      const answer = await get("/content/v1/pages/about");
      expectError(answer, 404, { message: "page_not_found" });
    });

    it("empty=false (our design) leaves out blocks without a value in the languages asked", async () => {
      const all = await ok("/content/v1/sections/hero?lang=pt-BR");
      expect(all.content).toHaveProperty("subtitle");
      expect(all.content.empty_text.content).toBeNull();
      const some = await ok("/content/v1/sections/hero?lang=pt-BR&empty=false");
      expect(some.content).not.toHaveProperty("subtitle"); // {} in pt-BR
      expect(some.content).not.toHaveProperty("empty_text"); // null
      expect(some.content).not.toHaveProperty("no_price");
      expect(some.content).toHaveProperty("archived"); // false is a value
      expect(some.content).toHaveProperty("cover"); // no languages of its own
      expect(some.content.title.content).toEqual({ "pt-BR": "Olá" });
      const page = await ok("/content/v1/pages/home?lang=pt-BR&empty=0");
      expect(page.content.hero).toEqual(some);
      expect(await ok("/content/v1/sections/hero?lang=pt-BR&empty=true")).toEqual(all);
    });
  });

  describe("the blocks endpoint", () => {
    it("without section: the oldest block with the marker", async () => {
      const title = await ok("/content/v1/blocks/title");
      expect(title.content).toEqual({ en: "Hello", de: "Hallo", "pt-BR": "Olá" });
      const promoTitle = await ok("/content/v1/blocks/title?section=promo");
      expect(promoTitle.content).toEqual({ en: "Hidden promo" });
      expect(promoTitle.id).toBeGreaterThan(title.id);
    });

    it("with section: only a block of that section, else block_not_found", async () => {
      expectError(await get("/content/v1/blocks/title?section=footer"), 404, {
        message: "block_not_found",
      });
      expectError(await get("/content/v1/blocks/title?section=no_such"), 404, {
        message: "block_not_found",
      });
      expectError(await get("/content/v1/blocks/nothing_here"), 404, {
        message: "block_not_found",
      });
      expect((await ok("/content/v1/blocks/copyright?section=footer")).content.de).toBe(
        "(c) Acme GmbH",
      );
    });

    it("has no empty parameter", async () => {
      expect(await ok("/content/v1/blocks/subtitle?lang=pt-BR&empty=false")).toMatchObject({
        marker: "subtitle",
        content: {},
      });
    });

    it("an invalid section marker is an invalid marker", async () => {
      expectError(await get("/content/v1/blocks/title?section=a-b"), 400, {
        message: "invalid_marker",
      });
    });
  });

  describe("langs", () => {
    it("returns the active languages in CRM order; lang has no effect on it", async () => {
      expect(await ok("/content/v1/langs")).toEqual({ langs: ["en", "de", "pt-BR"] });
      expect(await ok("/content/v1/langs?lang=de")).toEqual({ langs: ["en", "de", "pt-BR"] });
    });

    it("every code it returns is accepted in lang", async () => {
      const { langs } = await ok("/content/v1/langs");
      for (const code of langs) {
        expect((await get(`/content/v1/pages/home?lang=${code}`)).status).toBe(200);
      }
      expect((await get(`/content/v1/pages/home?lang=${langs.join(",")}`)).status).toBe(200);
    });
  });

  describe("language rules", () => {
    const titleIn = async (query: string) => (await ok(`/content/v1/blocks/title${query}`)).content;

    it("omitted: all active languages", async () => {
      expect(Object.keys(await titleIn(""))).toEqual(["en", "de", "pt-BR"]);
    });

    it("one code, a comma list or a repeated parameter; CRM order whatever the asked order", async () => {
      expect(await titleIn("?lang=de")).toEqual({ de: "Hallo" });
      const listed = await titleIn("?lang=pt-BR,en");
      expect(Object.keys(listed)).toEqual(["en", "pt-BR"]);
      const repeated = await titleIn("?lang=pt-BR&lang=de");
      expect(Object.keys(repeated)).toEqual(["de", "pt-BR"]);
      expect(await titleIn("?lang=de,en&lang=pt-BR")).toEqual(await titleIn(""));
    });

    it("no fallback: a language without a value is absent", async () => {
      expect(await ok("/content/v1/blocks/note?lang=de")).toMatchObject({ content: {} });
    });

    it("applies to pages, sections and blocks alike", async () => {
      const page = await ok("/content/v1/pages/home?lang=de");
      expect(page.content.hero.content.title.content).toEqual({ de: "Hallo" });
      const section = await ok("/content/v1/sections/hero?lang=de");
      expect(section.content.banner.content).toEqual({ de: "https://cdn.example/banner-de.png" });
    });

    it("invalid_lang echoes the offending code", async () => {
      for (const code of ["EN", "en_US", "eng", "english", "e", "de-", "de-B", "de-ABCDE", "12"]) {
        expectError(await get(`/content/v1/pages/home?lang=en,${code}`), 400, {
          message: "invalid_lang",
          lang: code,
        });
      }
    });

    it("unknown_lang names the asked codes, the unknown ones and the available ones", async () => {
      expectError(await get("/content/v1/pages/home?lang=fr"), 400, {
        message: "unknown_lang",
        lang: "fr",
        unknown: ["fr"],
        available: ["en", "de", "pt-BR"],
      });
      expectError(await get("/content/v1/sections/hero?lang=en,fr&lang=pt-PT"), 400, {
        message: "unknown_lang",
        lang: "en,fr,pt-PT",
        unknown: ["fr", "pt-PT"],
        available: ["en", "de", "pt-BR"],
      });
      // Case-sensitive: pt-br is well formed but is not the active pt-BR.
      expect((await get("/content/v1/blocks/title?lang=pt-br")).body).toMatchObject({
        message: "unknown_lang",
        unknown: ["pt-br"],
      });
    });

    it("at most 50 codes: too_many_langs with max", async () => {
      const fifty = Array.from({ length: 50 }, () => "en").join(",");
      expect((await get(`/content/v1/blocks/title?lang=${fifty}`)).status).toBe(200);
      expectError(await get(`/content/v1/blocks/title?lang=${fifty},de`), 400, {
        message: "too_many_langs",
        max: 50,
      });
      const repeated = Array.from({ length: 51 }, () => "lang=de").join("&");
      expectError(await get(`/content/v1/pages/home?${repeated}`), 400, {
        message: "too_many_langs",
        max: 50,
      });
    });

    it("the same rules on the blog endpoints", async () => {
      expectError(await get("/content/v1/blog?lang=EN"), 400, {
        message: "invalid_lang",
        lang: "EN",
      });
      expect((await get("/content/v1/blog/hello-world?lang=fr")).body.message).toBe("unknown_lang");
    });
  });

  describe("marker format", () => {
    const paths = ["pages", "sections", "blocks"];

    it("refuses a marker outside ^[A-Za-z0-9_]{2,40}$ with invalid_marker", async () => {
      const bad = [
        "a",
        "x".repeat(41),
        "home-page",
        "home.page",
        "home%20page",
        encodeURIComponent("страница"),
        encodeURIComponent("hé"),
        "hero%2Fx",
      ];
      for (const kind of paths) {
        for (const marker of bad) {
          expectError(await get(`/content/v1/${kind}/${marker}`), 400, {
            message: "invalid_marker",
          });
        }
      }
    });

    it("accepts 2 and 40 characters; markers are case-sensitive", async () => {
      expectError(await get("/content/v1/pages/ab"), 404, { message: "page_not_found" });
      expectError(await get(`/content/v1/sections/${"x".repeat(40)}`), 404, {
        message: "section_not_found",
      });
      expectError(await get("/content/v1/pages/Home"), 404, { message: "page_not_found" });
      expectError(await get("/content/v1/sections/HERO"), 404, { message: "section_not_found" });
      expectError(await get("/content/v1/blocks/lead_text"), 404, { message: "block_not_found" });
      expect((await ok("/content/v1/blocks/Lead_Text")).marker).toBe("Lead_Text");
    });

    it("checks the marker before the language", async () => {
      expectError(await get("/content/v1/pages/a?lang=fr"), 400, { message: "invalid_marker" });
      expect((await get("/content/v1/pages/nope?lang=fr")).body.message).toBe("unknown_lang");
    });
  });
});
