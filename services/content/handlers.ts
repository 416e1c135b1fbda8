/** ContentService: the read-only content API for one site per call. */
import type { ServiceImpl } from "@connectrpc/connect";
import type {
  ContentService,
  LanguageQuery,
  RenderedBody,
} from "../lib/gen/crm/content/v1/content_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { RenderedBodySchema } from "../lib/gen/crm/content/v1/content_pb.ts";
import { etagOf } from "../lib/etag.ts";
import { Code, type ErrorFields, limit, publicError } from "../lib/errors.ts";
import { MARKER, SLUG } from "../lib/formats.ts";
import { type LanguageError, resolveLanguages } from "./langs.ts";
import { isVisible, nextPublication, resolveWindow, summarizeWindow } from "./blog.ts";
import { renderBlock, renderPage, renderPost, renderPostSummary, renderSection } from "./render.ts";
import type { SiteContent } from "./model.ts";
import type { SiteContentCache } from "./site_cache.ts";
import type { Clock } from "../lib/clock.ts";

export interface ContentHandlerOptions {
  /** How long an answer may be reused when nothing is scheduled to change it. */
  freshForMs: number;
  clock: Clock;
}

const encoder = new TextEncoder();

function emptySite(siteId: string): SiteContent {
  return {
    siteId,
    languages: [],
    blog: { pageSize: 12, order: "publishedAt:desc", scheduling: true },
    pages: new Map(),
    sections: new Map(),
    blocksByMarker: new Map(),
    posts: [],
  };
}

/** The JSON body with its strong ETag (a digest of the bytes) and freshness. */
export function renderedBody(
  value: unknown,
  freshUntil: number,
): MessageInitShape<typeof RenderedBodySchema> {
  const json = encoder.encode(JSON.stringify(value));
  return { json, etag: etagOf(json), freshUntilMs: BigInt(freshUntil) };
}

export type { RenderedBody };

/** A refused lang parameter's typed fields. */
function languageFields(error: LanguageError): ErrorFields {
  switch (error.reason) {
    case "too_many_langs":
      return limit(error.fields.max);
    case "invalid_lang":
      return { case: "invalidLanguage", value: error.fields };
    case "unknown_lang":
      return { case: "unknownLanguages", value: error.fields };
  }
}

export function contentHandlers(
  cache: SiteContentCache,
  options: ContentHandlerOptions,
): ServiceImpl<typeof ContentService> {
  const now = () => options.clock.now();
  const site = async (siteId: string) => (await cache.get(siteId)) ?? emptySite(siteId);
  const languages = (content: SiteContent, query: LanguageQuery | undefined) => {
    const result = resolveLanguages(query?.values ?? [], content.languages);
    if (!result.ok) {
      throw publicError(Code.InvalidArgument, result.error.reason, languageFields(result.error));
    }
    return result.langs;
  };
  const marker = (value: string) => {
    if (!MARKER.test(value)) throw publicError(Code.InvalidArgument, "invalid_marker");
    return value;
  };
  const includeEmpty = (empty: string | undefined) => !(empty === "false" || empty === "0");
  const steady = () => now() + options.freshForMs;
  // A blog answer stops being right when the next scheduled post is published.
  const blogFresh = (content: SiteContent, t: number) => {
    const next = nextPublication(content.posts, t, content.blog.scheduling);
    return next === null ? t + options.freshForMs : Math.min(next, t + options.freshForMs);
  };

  return {
    async getPage(request) {
      const key = marker(request.marker);
      const content = await site(request.siteId);
      const langs = languages(content, request.lang);
      const page = content.pages.get(key);
      if (!page) throw publicError(Code.NotFound, "page_not_found");
      const body = renderPage(page, langs, { includeEmpty: includeEmpty(request.empty) });
      return { body: renderedBody(body, steady()) };
    },

    async getSection(request) {
      const key = marker(request.marker);
      const content = await site(request.siteId);
      const langs = languages(content, request.lang);
      const section = content.sections.get(key);
      if (!section) throw publicError(Code.NotFound, "section_not_found");
      const body = renderSection(section, langs, { includeEmpty: includeEmpty(request.empty) });
      return { body: renderedBody(body, steady()) };
    },

    async getBlock(request) {
      const key = marker(request.marker);
      if (request.section !== undefined) marker(request.section);
      const content = await site(request.siteId);
      const langs = languages(content, request.lang);
      const candidates = content.blocksByMarker.get(key) ?? [];
      const block = request.section === undefined
        ? candidates[0]
        : candidates.find((b) => b.sectionMarker === request.section);
      if (!block) throw publicError(Code.NotFound, "block_not_found");
      return { body: renderedBody(renderBlock(block, langs), steady()) };
    },

    async listPosts(request) {
      const content = await site(request.siteId);
      const langs = languages(content, request.lang);
      const t = now();
      const visible = content.posts.filter((p) => isVisible(p, t, content.blog.scheduling));
      const window = resolveWindow(
        {
          limit: request.limit,
          offset: request.offset,
          page: request.page,
          perPage: request.perPage,
        },
        content.blog.pageSize,
      );
      const posts = visible.slice(window.offset, window.offset + window.limit);
      const body = {
        ...summarizeWindow(visible.length, window),
        posts: posts.map((p) => renderPostSummary(p, langs)),
      };
      return { body: renderedBody(body, blogFresh(content, t)) };
    },

    async getPost(request) {
      const content = await site(request.siteId);
      const langs = languages(content, request.lang);
      const t = now();
      const post = SLUG.test(request.slug)
        ? content.posts.find((p) =>
          p.slug === request.slug && isVisible(p, t, content.blog.scheduling)
        )
        : undefined;
      if (!post) throw publicError(Code.NotFound, "post_not_found");
      return { body: renderedBody({ post: renderPost(post, langs) }, blogFresh(content, t)) };
    },

    async listLanguages(request) {
      const content = await site(request.siteId);
      return { body: renderedBody({ langs: content.languages }, steady()) };
    },
  };
}
