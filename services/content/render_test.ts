import { describe, expect, it } from "vitest";
import {
  renderBlock,
  renderPost,
  renderPostSummary,
  renderSection,
  renderValue,
} from "./render.ts";
import type { Block, Post, Section } from "./model.ts";

const block = (over: Partial<Block>): Block => ({
  id: 1,
  sectionMarker: "hero",
  marker: "title",
  name: "Title",
  type: "text",
  multilang: false,
  fields: null,
  content: null,
  updatedAt: "2026-01-01T00:00:00.000Z",
  ...over,
});

describe("renderValue", () => {
  it("filters text maps to the requested languages in CRM order", () => {
    const value = { de: "Hallo", en: "Hello", fr: "" };
    expect(renderValue({ type: "text" }, value, ["en", "fr"])).toEqual({ en: "Hello", fr: "" });
    expect(Object.keys(renderValue({ type: "html" }, value, ["en", "de"]) as object)).toEqual([
      "en",
      "de",
    ]);
  });

  it("has no fallback: an absent language stays absent", () => {
    expect(renderValue({ type: "text" }, { en: "Hello" }, ["de"])).toEqual({});
  });

  it("keeps single-file media and filters multilang media", () => {
    expect(renderValue({ type: "image" }, { file: "https://c/x.png" }, ["de"])).toEqual({
      file: "https://c/x.png",
    });
    expect(
      renderValue({ type: "video", multilang: true }, {
        en: "https://c/e.mp4",
        de: "https://c/d.mp4",
      }, ["de"]),
    ).toEqual({
      de: "https://c/d.mp4",
    });
  });

  it("always gives a link a title map", () => {
    expect(renderValue({ type: "link" }, { url: "/x", target: "_self" }, ["en"])).toEqual({
      url: "/x",
      target: "_self",
      title: {},
    });
  });

  it("filters link titles only", () => {
    const link = { url: "/signup", target: "_self", title: { en: "Join", de: "Mitmachen" } };
    expect(renderValue({ type: "link" }, link, ["de"])).toEqual({
      url: "/signup",
      target: "_self",
      title: { de: "Mitmachen" },
    });
  });

  it("returns raw values whatever the languages", () => {
    expect(renderValue({ type: "number" }, 42, ["en"])).toBe(42);
    expect(renderValue({ type: "color" }, "#ff0000", [])).toBe("#ff0000");
    expect(renderValue({ type: "boolean" }, false, ["de"])).toBe(false);
    expect(renderValue({ type: "date_range" }, { from: "2026-01-01", to: "2026-01-02" }, ["de"]))
      .toEqual({
        from: "2026-01-01",
        to: "2026-01-02",
      });
    expect(renderValue({ type: "date" }, null, ["de"])).toBeNull();
  });

  it("shapes object and array fields like standalone values", () => {
    const fields = [
      { marker: "caption", type: "text" as const },
      { marker: "photo", type: "image" as const },
      { marker: "cta", type: "link" as const },
    ];
    const value = {
      caption: { en: "Hi", de: "Hallo" },
      photo: { file: "https://c/p.png" },
      cta: { url: "/x", target: "_blank", title: { en: "Go", de: "Los" } },
    };
    expect(renderValue({ type: "object", fields }, value, ["de"])).toEqual({
      caption: { de: "Hallo" },
      photo: { file: "https://c/p.png" },
      cta: { url: "/x", target: "_blank", title: { de: "Los" } },
    });
    expect(
      renderValue({ type: "array", fields: [{ marker: "label", type: "text" }] }, [{
        label: { en: "One" },
      }, {
        label: { en: "Two", de: "Zwei" },
      }], ["de"]),
    ).toEqual([{ label: {} }, { label: { de: "Zwei" } }]);
  });
});

describe("renderBlock and renderSection", () => {
  it("returns the block fields without field definitions", () => {
    const b = block({
      type: "object",
      fields: [{ marker: "a", type: "text" }],
      content: { a: { en: "x" } },
    });
    const out = renderBlock(b, ["en"]);
    expect(Object.keys(out)).toEqual([
      "id",
      "marker",
      "name",
      "type",
      "multilang",
      "updatedAt",
      "content",
    ]);
    expect(JSON.stringify(out)).not.toContain("fields");
  });

  it("keys blocks by marker, keeps hidden sections' show flag, can drop empty blocks", () => {
    const section: Section = {
      marker: "hero",
      pageMarker: null,
      show: false,
      blocks: [
        block({ marker: "title", content: { en: "Hello" } }),
        block({ id: 2, marker: "sub", content: null }),
      ],
      savedAt: "2026-01-01T00:00:00.000Z",
    };
    const all = renderSection(section, ["en"], { includeEmpty: true });
    expect(all.show).toBe(false);
    expect(Object.keys(all.content as object)).toEqual(["title", "sub"]);
    const nonEmpty = renderSection(section, ["de"], { includeEmpty: false });
    expect(Object.keys(nonEmpty.content as object)).toEqual([]);
  });
});

describe("posts", () => {
  const post: Post = {
    slug: "hello-world",
    status: "published",
    publishedAt: Date.parse("2026-01-10T09:00:00Z"),
    createdAt: null,
    author: null,
    title: { en: "Hello" },
    image: "https://c/cover.png",
    body: { en: "<p>Hi</p>", de: "<p>Hallo</p>" },
    savedAt: 0,
    position: 0,
  };

  it("gives a single cover under every requested language", () => {
    expect(renderPostSummary(post, ["en", "de"])).toEqual({
      slug: "hello-world",
      author: null,
      publishedAt: "2026-01-10T09:00:00.000Z",
      title: { en: "Hello" },
      image: { en: "https://c/cover.png", de: "https://c/cover.png" },
    });
  });

  it("omits empty translations of title, cover and body", () => {
    const sparse: Post = {
      ...post,
      title: { en: "Hello", de: "" },
      image: { en: "https://c/en.png", de: " " },
      body: { en: "", de: "<p>Hallo</p>" },
    };
    expect(renderPost(sparse, ["en", "de"])).toMatchObject({
      title: { en: "Hello" },
      image: { en: "https://c/en.png" },
      body: { de: "<p>Hallo</p>" },
    });
    expect(renderPostSummary({ ...post, image: null }, ["en"]).image).toEqual({});
  });

  it("adds the body to a single post and leaves it out of summaries", () => {
    expect(renderPost(post, ["de"]).body).toEqual({ de: "<p>Hallo</p>" });
    expect(renderPostSummary(post, ["de"])).not.toHaveProperty("body");
  });
});
