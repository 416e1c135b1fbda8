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
import {
  type LanguageError,
  type RequestedLanguages,
  resolveLanguages,
  withFallbacks,
} from "./langs.ts";
import {
  isVisible,
  nextPublication,
  postStatus,
  resolveWindow,
  sortPosts,
  summarizeWindow,
} from "./blog.ts";
import { renderBlock, renderPage, renderPost, renderPostSummary, renderSection } from "./render.ts";
import type { Post, SiteContent } from "./model.ts";
import { cacheTags, renderPageIndex, renderSectionIndex } from "./index.ts";
import {
  type Cursor,
  decodeCursor,
  encodeCursor,
  everything,
  namesOf,
  type RecordedChange,
} from "./feed.ts";
import type { SiteContentCache } from "./site_cache.ts";
import type { Clock } from "../lib/clock.ts";

export interface ContentHandlerOptions {
  /** How long an answer may be reused when nothing is scheduled to change it. */
  freshForMs: number;
  clock: Clock;
  /** The site's recorded changes in a window of its feed (storage). */
  changesSince(
    siteId: string,
    window: { since: Cursor; upTo: number; now: number },
  ): Promise<RecordedChange[]>;
}

const encoder = new TextEncoder();

function emptySite(siteId: string): SiteContent {
  return {
    siteId,
    languages: [],
    fallbacks: {},
    blog: { pageSize: 12, order: "publishedAt:desc", scheduling: true },
    pages: new Map(),
    sections: new Map(),
    blocksByMarker: new Map(),
    posts: [],
    changeSeq: 0,
  };
}

/** The JSON body with its strong ETag (a digest of the bytes), freshness and cache tags. */
export function renderedBody(
  value: unknown,
  freshUntil: number,
  cacheTags = "",
): MessageInitShape<typeof RenderedBodySchema> {
  const json = encoder.encode(JSON.stringify(value));
  return { json, etag: etagOf(json), freshUntilMs: BigInt(freshUntil), cacheTags };
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
  const languages = (
    content: SiteContent,
    query: LanguageQuery | undefined,
    fallback?: string,
  ): RequestedLanguages => {
    const result = resolveLanguages(query?.values ?? [], content.languages);
    if (!result.ok) {
      throw publicError(Code.InvalidArgument, result.error.reason, languageFields(result.error));
    }
    // Only fallback=true fills missing languages; without it the seed's rule stands.
    return fallback === "true" ? withFallbacks(result.langs, content.fallbacks) : result.langs;
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
      const langs = languages(content, request.lang, request.fallback);
      const page = content.pages.get(key);
      if (!page) throw publicError(Code.NotFound, "page_not_found");
      const body = renderPage(page, langs, { includeEmpty: includeEmpty(request.empty) });
      const tags = cacheTags.of(request.siteId, ...cacheTags.page(page));
      return { body: renderedBody(body, steady(), tags) };
    },

    async getSection(request) {
      const key = marker(request.marker);
      const content = await site(request.siteId);
      const langs = languages(content, request.lang, request.fallback);
      const section = content.sections.get(key);
      if (!section) throw publicError(Code.NotFound, "section_not_found");
      const body = renderSection(section, langs, { includeEmpty: includeEmpty(request.empty) });
      const tags = cacheTags.of(request.siteId, ...cacheTags.section(section));
      return { body: renderedBody(body, steady(), tags) };
    },

    async getBlock(request) {
      const key = marker(request.marker);
      if (request.section !== undefined) marker(request.section);
      const content = await site(request.siteId);
      const langs = languages(content, request.lang, request.fallback);
      const candidates = content.blocksByMarker.get(key) ?? [];
      const block = request.section === undefined
        ? candidates[0]
        : candidates.find((b) => b.sectionMarker === request.section);
      if (!block) throw publicError(Code.NotFound, "block_not_found");
      const tags = cacheTags.of(request.siteId, `block:${block.sectionMarker}/${block.marker}`);
      return { body: renderedBody(renderBlock(block, langs), steady(), tags) };
    },

    async listPosts(request) {
      const content = await site(request.siteId);
      const langs = languages(content, request.lang, request.fallback);
      const t = now();
      const scheduling = content.blog.scheduling;
      // A preview lists every post, each with its status.
      const visible = request.preview
        ? sortPosts(content.posts, content.blog.order, true)
        : content.posts.filter((p) => isVisible(p, t, scheduling));
      const summary = (p: Post) =>
        request.preview
          ? { ...renderPostSummary(p, langs), status: postStatus(p, t, scheduling) }
          : renderPostSummary(p, langs);
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
        posts: posts.map(summary),
      };
      const tags = cacheTags.of(request.siteId, "blog", ...cacheTags.posts(posts));
      return { body: renderedBody(body, blogFresh(content, t), tags) };
    },

    async getPost(request) {
      const content = await site(request.siteId);
      const langs = languages(content, request.lang, request.fallback);
      const t = now();
      const scheduling = content.blog.scheduling;
      const post = SLUG.test(request.slug)
        ? content.posts.find((p) =>
          p.slug === request.slug && (request.preview || isVisible(p, t, scheduling))
        )
        : undefined;
      if (!post) throw publicError(Code.NotFound, "post_not_found");
      if (request.preview) {
        const shown = { ...renderPost(post, langs), status: postStatus(post, t, scheduling) };
        return { body: renderedBody({ post: shown }, blogFresh(content, t)) };
      }
      const tags = cacheTags.of(request.siteId, `post:${post.slug}`);
      return {
        body: renderedBody({ post: renderPost(post, langs) }, blogFresh(content, t), tags),
      };
    },

    async listLanguages(request) {
      const content = await site(request.siteId);
      const tags = cacheTags.of(request.siteId, "langs");
      return { body: renderedBody({ langs: content.languages }, steady(), tags) };
    },

    async getChanges(request) {
      const content = await cache.get(request.siteId);
      const t = now();
      let since: Cursor | undefined;
      if (request.since !== undefined) {
        since = decodeCursor(request.siteId, request.since);
        if (!since) throw publicError(Code.InvalidArgument, "invalid_cursor");
      }
      const upTo = content?.changeSeq ?? 0;
      // A cursor from a replica that had read further stays at its own place.
      const cursor = encodeCursor(request.siteId, { seq: Math.max(upTo, since?.seq ?? 0), at: t });
      const names = since
        ? namesOf(await options.changesSince(request.siteId, { since, upTo, now: t }))
        : everything(content, t);
      const body = { cursor, full: since === undefined, ...names };
      // The answer changes when a scheduled post is published, as the blog's does.
      const fresh = content ? blogFresh(content, t) : steady();
      return { body: renderedBody(body, fresh, cacheTags.of(request.siteId)) };
    },

    async listPages(request) {
      const content = await site(request.siteId);
      const tags = cacheTags.of(
        request.siteId,
        ...[...content.pages.keys()].map((m) => `page:${m}`),
      );
      return { body: renderedBody(renderPageIndex(content), steady(), tags) };
    },

    async listSections(request) {
      const content = await site(request.siteId);
      const markers = [...content.sections.keys()];
      const tags = cacheTags.of(request.siteId, ...markers.map((m) => `section:${m}`));
      return { body: renderedBody(renderSectionIndex(content), steady(), tags) };
    },
  };
}
