/**
 * What an import changed in what the content API returns: each page,
 * section, block and post answer rendered from the site's content before
 * and after, in every active language, and compared. A post counts by its
 * visibility at the import's time (a scheduled post's answer does not change
 * until its time: post.published tells of that). A change of the active
 * languages changes every answer (each is rendered in them); a change of the
 * blog's settings or order changes the blog list alone. Pure: the message
 * content.published carries the result.
 */
import { isVisible } from "./blog.ts";
import type { SiteContent } from "./model.ts";
import { renderBlock, renderPage, renderPost, renderPostSummary, renderSection } from "./render.ts";

export interface ContentChanges {
  /** Markers and slugs whose answers changed, each list sorted; blocks as SECTION/BLOCK. */
  pages: string[];
  sections: string[];
  blocks: string[];
  posts: string[];
}

/** Every answer of the site at `now`, by kind and name, as JSON text. */
function answers(site: SiteContent | undefined, now: number) {
  const out = {
    pages: new Map<string, string>(),
    sections: new Map<string, string>(),
    blocks: new Map<string, string>(),
    posts: new Map<string, string>(),
    other: "",
  };
  if (!site) return out;
  const langs = site.languages;
  const all = { includeEmpty: true };
  for (const page of site.pages.values()) {
    out.pages.set(page.marker, JSON.stringify(renderPage(page, langs, all)));
  }
  for (const section of site.sections.values()) {
    out.sections.set(section.marker, JSON.stringify(renderSection(section, langs, all)));
    for (const block of section.blocks) {
      out.blocks.set(
        `${section.marker}/${block.marker}`,
        JSON.stringify(renderBlock(block, langs)),
      );
    }
  }
  const visible = site.posts.filter((p) => isVisible(p, now, site.blog.scheduling));
  for (const post of visible) out.posts.set(post.slug, JSON.stringify(renderPost(post, langs)));
  // The languages answer and the blog list (its order and page size) belong to no marker.
  out.other = JSON.stringify([
    langs,
    site.blog.pageSize,
    visible.map((p) => renderPostSummary(p, langs)),
  ]);
  return out;
}

/** The names whose answer differs between the two maps, sorted. */
function differing(before: Map<string, string>, after: Map<string, string>, all: boolean) {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => all || before.get(n) !== after.get(n)).sort();
}

/**
 * The answers that differ between the site's content before and after an
 * import, at the import's time; undefined when no answer of the site changed.
 */
export function contentChanges(
  before: SiteContent | undefined,
  after: SiteContent | undefined,
  now: number,
): ContentChanges | undefined {
  const a = answers(before, now);
  const b = answers(after, now);
  // The languages and their fallbacks change every answer (fallbacks those with fallback=true).
  const languagesChanged = JSON.stringify([before?.languages ?? [], before?.fallbacks ?? {}]) !==
    JSON.stringify([after?.languages ?? [], after?.fallbacks ?? {}]);
  const changes: ContentChanges = {
    pages: differing(a.pages, b.pages, languagesChanged),
    sections: differing(a.sections, b.sections, languagesChanged),
    blocks: differing(a.blocks, b.blocks, languagesChanged),
    posts: differing(a.posts, b.posts, languagesChanged),
  };
  const any = Object.values(changes).some((names) => names.length > 0) || a.other !== b.other;
  return any ? changes : undefined;
}
