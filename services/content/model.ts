/** A site's published-content model as the read path holds it in memory. */
import type { BlockType, BlogOrder } from "../lib/formats.ts";
import type { FieldDef, Json, LanguageMap } from "../lib/manifest/types.ts";

export interface Block {
  id: number;
  sectionMarker: string;
  marker: string;
  name: string;
  type: BlockType;
  multilang: boolean;
  fields: FieldDef[] | null;
  content: Json;
  updatedAt: string;
}

export interface Section {
  marker: string;
  pageMarker: string | null;
  show: boolean;
  /** In manifest order. */
  blocks: Block[];
  /** ISO time of the last import that changed the section itself (or removed a block of it). */
  savedAt: string;
}

export interface Page {
  marker: string;
  href: string;
  sections: Section[];
  /** ISO time of the last import that changed the page or its list of sections. */
  savedAt: string;
}

export interface Post {
  slug: string;
  status: "draft" | "published";
  publishedAt: number | null;
  createdAt: number | null;
  author: string | null;
  title: LanguageMap;
  image: string | LanguageMap | null;
  body: LanguageMap;
  /** Unix ms of the last import that changed the post. */
  savedAt: number;
  position: number;
}

export interface SiteContent {
  siteId: string;
  /** Active languages in CRM order. */
  languages: string[];
  /** site.fallbacks: the language each language falls back to (fallback=true). */
  fallbacks: Record<string, string>;
  blog: { pageSize: number; order: BlogOrder; scheduling: boolean };
  pages: Map<string, Page>;
  sections: Map<string, Section>;
  /** Every block with a marker, oldest (lowest id) first. */
  blocksByMarker: Map<string, Block[]>;
  /** Every post, drafts included, in the blog's order. */
  posts: Post[];
  /** The last sequence number of the site's changes feed when the content was read (0: none). */
  changeSeq: number;
}
