/**
 * Shapes published content into the public JSON values. Pure functions over
 * the in-memory model: language maps are restricted to the requested
 * languages and come out in CRM order; values without translations ignore
 * the languages; field definitions are never returned.
 */
import type { BlockType } from "../lib/formats.ts";
import type { FieldDef, Json } from "../lib/manifest/types.ts";
import { isJsonObject, type JsonObject as JsonObjectOf } from "../lib/json.ts";
import { pickLanguages } from "./langs.ts";
import type { Block, Page, Post, Section } from "./model.ts";

type JsonObject = JsonObjectOf<Json>;

/** What a value's shaping depends on: its block's or field's definition. */
export interface ValueShape {
  type: BlockType;
  /** Images and videos: a language map rather than one value. */
  multilang?: boolean;
  /** Objects and arrays: their fields. */
  fields?: readonly FieldDef[] | null;
}

/** A value shaped by the rules of its type (standalone block or object field). */
export function renderValue(
  { type, multilang = false, fields }: ValueShape,
  value: Json,
  langs: readonly string[],
): Json {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "text":
    case "html":
      return isJsonObject<Json>(value) ? pickLanguages(value, langs) as JsonObject : value;
    case "image":
    case "video":
      return multilang && isJsonObject<Json>(value)
        ? pickLanguages(value, langs) as JsonObject
        : value;
    case "link": {
      if (!isJsonObject<Json>(value)) return value;
      // title is always a language map, empty when the link has no saved title.
      const title = isJsonObject<Json>(value.title) ? value.title : {};
      return { ...value, title: pickLanguages(title, langs) as JsonObject };
    }
    case "object":
      return renderObject(fields ?? [], value, langs);
    case "array":
      return Array.isArray(value)
        ? value.map((item) => renderObject(fields ?? [], item, langs))
        : value;
    default:
      // number, color, date, date_range, boolean: the raw stored value.
      return value;
  }
}

function renderObject(fields: readonly FieldDef[], value: Json, langs: readonly string[]): Json {
  if (!isJsonObject<Json>(value)) return value;
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    const field = fields.find((f) => f.marker === key);
    out[key] = field ? renderValue(field, inner, langs) : inner;
  }
  return out;
}

export function renderBlock(block: Block, langs: readonly string[]): JsonObject {
  return {
    id: block.id,
    marker: block.marker,
    name: block.name,
    type: block.type,
    multilang: block.multilang,
    updatedAt: block.updatedAt,
    content: renderValue(block, block.content, langs),
  };
}

/** True for a value with nothing in it for the requested languages. */
export function isEmptyValue(value: Json): boolean {
  if (value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isJsonObject<Json>(value)) return Object.keys(value).length === 0;
  return false;
}

export interface RenderOptions {
  /** False drops blocks whose value is empty in the requested languages (`empty=false`). */
  includeEmpty: boolean;
}

export function renderSection(
  section: Section,
  langs: readonly string[],
  options: RenderOptions,
): JsonObject {
  const content: JsonObject = {};
  for (const block of section.blocks) {
    const rendered = renderBlock(block, langs);
    if (!options.includeEmpty && isEmptyValue(rendered.content)) continue;
    content[block.marker] = rendered;
  }
  return { marker: section.marker, show: section.show, content };
}

export function renderPage(
  page: Page,
  langs: readonly string[],
  options: RenderOptions,
): JsonObject {
  const content: JsonObject = {};
  for (const section of page.sections) {
    content[section.marker] = renderSection(section, langs, options);
  }
  return { marker: page.marker, href: page.href, content };
}

/**
 * A post's translations: unlike block values, where a blank string is a saved
 * value, an empty post translation counts as no translation and is omitted.
 */
function filledTranslations(
  map: Record<string, string> | null | undefined,
  langs: readonly string[],
): JsonObject {
  const filled = (value: unknown) => typeof value === "string" && value.trim() !== "";
  const picked = Object.entries(pickLanguages(map, langs, filled));
  return Object.fromEntries(picked.filter(([, value]) => filled(value))) as JsonObject;
}

/** One cover is the same URL under every requested language; a map is filtered. */
function coverFor(image: Post["image"], langs: readonly string[]): JsonObject {
  if (typeof image === "string") {
    return image.trim() === "" ? {} : Object.fromEntries(langs.map((l) => [l, image]));
  }
  return filledTranslations(image, langs);
}

export function renderPostSummary(post: Post, langs: readonly string[]): JsonObject {
  return {
    slug: post.slug,
    author: post.author,
    publishedAt: post.publishedAt === null ? null : new Date(post.publishedAt).toISOString(),
    title: filledTranslations(post.title, langs),
    image: coverFor(post.image, langs),
  };
}

export function renderPost(post: Post, langs: readonly string[]): JsonObject {
  return { ...renderPostSummary(post, langs), body: filledTranslations(post.body, langs) };
}
