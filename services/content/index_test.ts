import { describe, expect, it } from "vitest";
import { cacheTags, pageUpdatedAt, renderPageIndex, renderSectionIndex } from "./index.ts";
import type { Block, Page, Section, SiteContent } from "./model.ts";

const block = (section: string, marker: string, updatedAt: string): Block => ({
  id: 1,
  sectionMarker: section,
  marker,
  name: marker,
  type: "text",
  multilang: false,
  fields: null,
  content: null,
  updatedAt,
});

function site(): SiteContent {
  const hero: Section = {
    marker: "hero",
    pageMarker: "home",
    show: true,
    blocks: [
      block("hero", "title", "2026-01-02T00:00:00.000Z"),
      block("hero", "sub", "2026-01-05T00:00:00.000Z"),
    ],
    savedAt: "2026-01-09T00:00:00.000Z",
  };
  const bare: Section = {
    marker: "bare",
    pageMarker: "about",
    show: false,
    blocks: [],
    savedAt: "2026-01-03T00:00:00.000Z",
  };
  const footer: Section = {
    marker: "footer",
    pageMarker: null,
    show: true,
    blocks: [],
    savedAt: "2026-01-04T00:00:00.000Z",
  };
  const home: Page = {
    marker: "home",
    href: "/",
    sections: [hero],
    savedAt: "2026-01-08T00:00:00.000Z",
  };
  const about: Page = {
    marker: "about",
    href: "/about",
    sections: [bare],
    savedAt: "2026-01-07T00:00:00.000Z",
  };
  return {
    siteId: "demo",
    languages: ["en"],
    fallbacks: {},
    blog: { pageSize: 12, order: "manual", scheduling: true },
    pages: new Map([["home", home], ["about", about]]),
    sections: new Map([["hero", hero], ["bare", bare], ["footer", footer]]),
    blocksByMarker: new Map(),
    posts: [],
    changeSeq: 0,
  };
}

describe("page and section indexes", () => {
  it("takes the newest block's updatedAt, else the page's own last change", () => {
    const s = site();
    expect(pageUpdatedAt(s.pages.get("home")!)).toBe("2026-01-05T00:00:00.000Z");
    expect(renderPageIndex(s)).toEqual({
      pages: [
        { marker: "home", href: "/", updatedAt: "2026-01-05T00:00:00.000Z" },
        { marker: "about", href: "/about", updatedAt: "2026-01-07T00:00:00.000Z" },
      ],
      total: 2,
    });
  });

  it("lists sections in order with their page (or null) and show", () => {
    expect(renderSectionIndex(site())).toEqual({
      sections: [
        { marker: "hero", show: true, page: "home", updatedAt: "2026-01-05T00:00:00.000Z" },
        { marker: "bare", show: false, page: "about", updatedAt: "2026-01-03T00:00:00.000Z" },
        { marker: "footer", show: true, page: null, updatedAt: "2026-01-04T00:00:00.000Z" },
      ],
      total: 3,
    });
  });

  it("tags an answer with the site and everything it holds", () => {
    const s = site();
    expect(cacheTags.of("demo", ...cacheTags.page(s.pages.get("home")!))).toBe(
      "site:demo page:home section:hero block:hero/title block:hero/sub",
    );
    expect(cacheTags.of("demo", "langs")).toBe("site:demo langs");
  });
});
