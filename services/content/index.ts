/**
 * The page and section indexes (what a site generator lists before it reads
 * each page), and the cache tags of every answer: the names a CDN purges by,
 * the same names content.published messages carry. Pure functions over the
 * in-memory model.
 */
import type { Page, Section, SiteContent } from "./model.ts";
import type { Post } from "./model.ts";

/** The latest of the blocks' updatedAt (ISO strings of one form compare as times), or undefined. */
function latestBlock(sections: readonly Section[]): string | undefined {
  let latest: string | undefined;
  for (const section of sections) {
    for (const block of section.blocks) {
      if (latest === undefined || block.updatedAt > latest) latest = block.updatedAt;
    }
  }
  return latest;
}

/** A page's updatedAt: its newest block's, or the page's own last change when it has none. */
export function pageUpdatedAt(page: Page): string {
  return latestBlock(page.sections) ?? page.savedAt;
}

/** A section's updatedAt: its newest block's, or the section's own last change. */
export function sectionUpdatedAt(section: Section): string {
  return latestBlock([section]) ?? section.savedAt;
}

/** `GET /content/v1/pages`: every page in manifest order. */
export function renderPageIndex(site: SiteContent) {
  const pages = [...site.pages.values()].map((p) => ({
    marker: p.marker,
    href: p.href,
    updatedAt: pageUpdatedAt(p),
  }));
  return { pages, total: pages.length };
}

/** `GET /content/v1/sections`: every section in manifest order, with its page's marker or null. */
export function renderSectionIndex(site: SiteContent) {
  const sections = [...site.sections.values()].map((s) => ({
    marker: s.marker,
    show: s.show,
    page: s.pageMarker,
    updatedAt: sectionUpdatedAt(s),
  }));
  return { sections, total: sections.length };
}

/** Cache tags, each list starting with the site's. */
export const cacheTags = {
  of: (siteId: string, ...tags: string[]) => [`site:${siteId}`, ...tags].join(" "),
  section: (section: Section, blockMarkers?: readonly string[]) => [
    `section:${section.marker}`,
    ...(blockMarkers ?? section.blocks.map((b) => b.marker)).map((b) =>
      `block:${section.marker}/${b}`
    ),
  ],
  page: (
    page: Page,
  ) => [`page:${page.marker}`, ...page.sections.flatMap((s) => cacheTags.section(s))],
  posts: (posts: readonly Post[]) => posts.map((p) => `post:${p.slug}`),
};
