import { describe, expect, it } from "vitest";
import { contentChanges } from "./changes.ts";
import type { Block, Post, Section, SiteContent } from "./model.ts";

const NOW = Date.parse("2026-03-01T12:00:00Z");

function block(section: string, marker: string, text: string, id = 1): Block {
  return {
    id,
    sectionMarker: section,
    marker,
    name: marker,
    type: "text",
    multilang: true,
    fields: null,
    content: { en: text },
    updatedAt: "2026-01-01T00:00:00.000Z",
  };
}

function post(slug: string, publishedAt: number | null, over: Partial<Post> = {}): Post {
  return {
    slug,
    status: "published",
    publishedAt,
    createdAt: null,
    author: null,
    title: { en: slug },
    image: null,
    body: { en: `<p>${slug}</p>` },
    savedAt: NOW - 60_000,
    position: 0,
    ...over,
  };
}

/** A site with a page "home" holding section "hero", a free section "footer", and posts. */
function site(
  options: { hero?: Block[]; footer?: Block[]; posts?: Post[]; languages?: string[] } = {},
): SiteContent {
  const hero: Section = {
    marker: "hero",
    pageMarker: "home",
    show: true,
    blocks: options.hero ?? [block("hero", "title", "Hello")],
    savedAt: "2026-01-01T00:00:00.000Z",
  };
  const footer: Section = {
    marker: "footer",
    pageMarker: null,
    show: true,
    blocks: options.footer ?? [block("footer", "note", "Bye", 2)],
    savedAt: "2026-01-01T00:00:00.000Z",
  };
  return {
    siteId: "demo",
    languages: options.languages ?? ["en"],
    fallbacks: {},
    blog: { pageSize: 12, order: "publishedAt:desc", scheduling: true },
    pages: new Map([["home", {
      marker: "home",
      href: "/",
      sections: [hero],
      savedAt: "2026-01-01T00:00:00.000Z",
    }]]),
    sections: new Map([["hero", hero], ["footer", footer]]),
    blocksByMarker: new Map(),
    posts: options.posts ?? [post("hello", NOW - 3600_000)],
    changeSeq: 0,
  };
}

describe("contentChanges", () => {
  it("finds nothing when no answer changed", () => {
    expect(contentChanges(site(), site(), NOW)).toBeUndefined();
  });

  it("names a changed block, its section and the page that holds it", () => {
    const after = site({ hero: [block("hero", "title", "Hi")] });
    expect(contentChanges(site(), after, NOW)).toEqual({
      pages: ["home"],
      sections: ["hero"],
      blocks: ["hero/title"],
      posts: [],
    });
  });

  it("names a block of a free section without any page", () => {
    const after = site({ footer: [block("footer", "note", "Ciao", 2)] });
    expect(contentChanges(site(), after, NOW)).toEqual({
      pages: [],
      sections: ["footer"],
      blocks: ["footer/note"],
      posts: [],
    });
  });

  it("names added and removed things, each list sorted", () => {
    const after = site({
      footer: [block("footer", "zeta", "z", 3), block("footer", "alpha", "a", 4)],
      posts: [post("zz", NOW - 1000), post("aa", NOW - 2000)],
    });
    expect(contentChanges(site(), after, NOW)).toEqual({
      pages: [],
      sections: ["footer"],
      blocks: ["footer/alpha", "footer/note", "footer/zeta"],
      posts: ["aa", "hello", "zz"],
    });
    expect(contentChanges(undefined, site(), NOW)).toEqual({
      pages: ["home"],
      sections: ["footer", "hero"],
      blocks: ["footer/note", "hero/title"],
      posts: ["hello"],
    });
  });

  it("does not count a post scheduled ahead, nor a draft, until it is visible", () => {
    const scheduled = site({ posts: [post("hello", NOW - 3600_000), post("soon", NOW + 10_000)] });
    expect(contentChanges(site(), scheduled, NOW)).toBeUndefined();
    const draft = site({
      posts: [post("hello", NOW - 3600_000), post("wip", null, { status: "draft" })],
    });
    expect(contentChanges(site(), draft, NOW)).toBeUndefined();
    // Unpublishing a visible post changes its answer (now not found).
    const unpublished = site({ posts: [post("hello", NOW - 3600_000, { status: "draft" })] });
    expect(contentChanges(site(), unpublished, NOW)?.posts).toEqual(["hello"]);
  });

  it("counts every answer as changed when the active languages change", () => {
    expect(contentChanges(site(), site({ languages: ["en", "de"] }), NOW)).toEqual({
      pages: ["home"],
      sections: ["footer", "hero"],
      blocks: ["footer/note", "hero/title"],
      posts: ["hello"],
    });
  });

  it("tells of a changed blog list with no marker or slug of its own", () => {
    const before = site({ posts: [post("a", NOW - 2000), post("b", NOW - 1000)] });
    const reordered = site({ posts: [post("b", NOW - 1000), post("a", NOW - 2000)] });
    expect(contentChanges(before, reordered, NOW)).toEqual({
      pages: [],
      sections: [],
      blocks: [],
      posts: [],
    });
  });
});
