/** The content API's schemas (content-api.md): pages, sections, blocks, posts, languages. */
import { BLOCK_TYPES } from "../../../lib/formats.ts";
import { type Json, ref } from "../components.ts";

/** A post's state, on a preview key's answers only. */
const POST_STATUS = {
  type: "string",
  enum: ["draft", "scheduled", "published"],
  description: "Only to a preview key: a draft, a post scheduled for later, or published.",
};

export const LANG_MAP = {
  type: "object",
  description:
    "Language code to value, in the site's language order; absent languages are left out.",
  propertyNames: { pattern: "^[a-z]{2}(-[A-Za-z]{2,4})?$" },
  additionalProperties: { type: "string" },
};

const nullable = (schema: Json) => ({ anyOf: [schema, { type: "null" }] });

/** The blocks' content by type (content-api.md, "Block content by type"). */
const BLOCK_CONTENT_RULES = [
  {
    if: { properties: { type: { enum: ["text", "html"] } } },
    then: { properties: { content: nullable(LANG_MAP) } },
  },
  {
    if: { properties: { type: { const: "link" } } },
    then: {
      properties: {
        content: nullable({
          type: "object",
          properties: { url: { type: "string" }, target: { type: "string" }, title: LANG_MAP },
        }),
      },
    },
  },
  {
    if: { properties: { type: { enum: ["image", "video"] } } },
    then: { properties: { content: nullable({ type: "object" }) } },
  },
  {
    if: { properties: { type: { const: "object" } } },
    then: { properties: { content: nullable({ type: "object" }) } },
  },
  {
    if: { properties: { type: { const: "array" } } },
    then: { properties: { content: nullable({ type: "array", items: { type: "object" } }) } },
  },
];

export const CONTENT_SCHEMAS: Record<string, Json> = {
  Block: {
    type: "object",
    required: ["id", "marker", "name", "type", "multilang", "updatedAt", "content"],
    additionalProperties: false,
    properties: {
      id: { type: "integer", description: "Internal id; differs between installations." },
      marker: { type: "string" },
      name: { type: "string" },
      type: { type: "string", enum: [...BLOCK_TYPES] },
      multilang: { type: "boolean" },
      updatedAt: { type: "string", format: "date-time" },
      content: { description: "The value, shaped by `type`; null when empty." },
    },
    allOf: BLOCK_CONTENT_RULES,
  },
  Section: {
    type: "object",
    required: ["marker", "show", "content"],
    additionalProperties: false,
    properties: {
      marker: { type: "string" },
      show: { type: "boolean" },
      content: {
        type: "object",
        description: "Block marker to block, in manifest order.",
        additionalProperties: ref("Block"),
      },
    },
  },
  Page: {
    type: "object",
    required: ["marker", "href", "content"],
    additionalProperties: false,
    properties: {
      marker: { type: "string" },
      href: { type: "string" },
      content: {
        type: "object",
        description: "Section marker to section.",
        additionalProperties: ref("Section"),
      },
    },
  },
  PostSummary: {
    type: "object",
    required: ["slug", "author", "publishedAt", "title", "image"],
    additionalProperties: false,
    properties: {
      slug: { type: "string" },
      author: { type: ["string", "null"] },
      publishedAt: { type: ["string", "null"], format: "date-time" },
      title: LANG_MAP,
      image: LANG_MAP,
      status: POST_STATUS,
    },
  },
  Post: {
    type: "object",
    required: ["slug", "author", "publishedAt", "title", "image", "body"],
    additionalProperties: false,
    properties: {
      slug: { type: "string" },
      author: { type: ["string", "null"] },
      publishedAt: { type: ["string", "null"], format: "date-time" },
      title: LANG_MAP,
      image: LANG_MAP,
      body: { ...LANG_MAP, description: "Cleaned HTML per language." },
      status: POST_STATUS,
    },
  },
  PostAnswer: {
    type: "object",
    required: ["post"],
    additionalProperties: false,
    properties: { post: ref("Post") },
  },
  BlogWindow: {
    type: "object",
    required: ["total", "limit", "offset", "page", "pages", "hasMore", "nextOffset", "posts"],
    additionalProperties: false,
    properties: {
      total: { type: "integer", minimum: 0 },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      offset: { type: "integer", minimum: 0 },
      page: { type: ["integer", "null"], minimum: 1 },
      pages: { type: "integer", minimum: 0 },
      hasMore: { type: "boolean" },
      nextOffset: { type: ["integer", "null"] },
      posts: { type: "array", items: ref("PostSummary") },
    },
  },
  Languages: {
    type: "object",
    required: ["langs"],
    additionalProperties: false,
    properties: { langs: { type: "array", items: { type: "string" } } },
  },
  PageIndex: {
    type: "object",
    required: ["pages", "total"],
    additionalProperties: false,
    properties: {
      pages: {
        type: "array",
        description: "Every page, in manifest order.",
        items: {
          type: "object",
          required: ["marker", "href", "updatedAt"],
          additionalProperties: false,
          properties: {
            marker: { type: "string" },
            href: { type: "string" },
            updatedAt: {
              type: "string",
              format: "date-time",
              description: "The latest updatedAt of the page's blocks; when it has none, the " +
                "last import that changed the page.",
            },
          },
        },
      },
      total: { type: "integer", minimum: 0 },
    },
  },
  SectionIndex: {
    type: "object",
    required: ["sections", "total"],
    additionalProperties: false,
    properties: {
      sections: {
        type: "array",
        description: "Every section, in manifest order (pages' sections first, then free ones).",
        items: {
          type: "object",
          required: ["marker", "show", "page", "updatedAt"],
          additionalProperties: false,
          properties: {
            marker: { type: "string" },
            show: { type: "boolean" },
            page: { type: ["string", "null"], description: "The marker of its page, or null." },
            updatedAt: {
              type: "string",
              format: "date-time",
              description: "The latest updatedAt of its blocks; when it has none, the last " +
                "import that changed the section.",
            },
          },
        },
      },
      total: { type: "integer", minimum: 0 },
    },
  },
  Changes: {
    type: "object",
    required: ["cursor", "full", "pages", "sections", "blocks", "posts"],
    additionalProperties: false,
    properties: {
      cursor: {
        type: "string",
        pattern: "^[A-Za-z0-9_-]{1,200}$",
        description: "Opaque, bound to the site, valid for at least 30 days: pass it as since.",
      },
      full: {
        type: "boolean",
        description: "True without since: the lists name everything the API answers now. " +
          "False: what changed since the cursor (names whose answer is now 404 included), " +
          "as the content.published and post.published messages of that time named together.",
      },
      pages: { type: "array", items: { type: "string" }, description: "Page markers, sorted." },
      sections: {
        type: "array",
        items: { type: "string" },
        description: "Section markers, sorted.",
      },
      blocks: {
        type: "array",
        items: { type: "string" },
        description: "Blocks as SECTION/BLOCK, sorted.",
      },
      posts: { type: "array", items: { type: "string" }, description: "Post slugs, sorted." },
    },
  },
};
