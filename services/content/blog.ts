/**
 * The blog list window: which posts are visible, in which order, and how the
 * limit, offset, page and perPage parameters resolve. Invalid pagination
 * values never cause an error; each falls back to its default.
 */
import type { BlogOrder } from "../lib/formats.ts";
import { LIMITS } from "../lib/formats.ts";

export interface PostTimes {
  status: "draft" | "published";
  publishedAt: number | null;
  createdAt: number | null;
  /** When the post was last saved (imported with a change). */
  savedAt: number;
  position: number;
}

/**
 * Drafts never. A published post once its publication time has come; a post
 * saved with a future date is scheduled, and its time arriving publishes it
 * only while scheduling is enabled in the blog settings. Without scheduling it
 * stays hidden until it is saved again after its date (an editor's action).
 */
export function isVisible(post: PostTimes, now: number, scheduling: boolean): boolean {
  if (post.status !== "published") return false;
  if (post.publishedAt === null) return true;
  return post.publishedAt <= now && (scheduling || post.publishedAt <= post.savedAt);
}

/** A post as a preview shows it: a draft, scheduled (not yet visible), or published. */
export function postStatus(
  post: PostTimes,
  now: number,
  scheduling: boolean,
): "draft" | "scheduled" | "published" {
  if (post.status === "draft") return "draft";
  return isVisible(post, now, scheduling) ? "published" : "scheduled";
}

/** The earliest publication still to come, when a cached answer stops being right. */
export function nextPublication(
  posts: readonly PostTimes[],
  now: number,
  scheduling: boolean,
): number | null {
  if (!scheduling) return null;
  let next: number | null = null;
  for (const p of posts) {
    if (p.status === "published" && p.publishedAt !== null && p.publishedAt > now) {
      if (next === null || p.publishedAt < next) next = p.publishedAt;
    }
  }
  return next;
}

/**
 * Sorts by the blog setting; posts without the date go last; ties keep
 * manifest order. With `createdForUnpublished` (a preview's list, drafts
 * among the posts) a post without publishedAt sorts by its createdAt.
 */
export function sortPosts<T extends PostTimes>(
  posts: readonly T[],
  order: BlogOrder,
  createdForUnpublished = false,
): T[] {
  const sorted = [...posts];
  if (order === "manual") return sorted.sort((a, b) => a.position - b.position);
  const [field, direction] = order.split(":") as ["publishedAt" | "createdAt", "asc" | "desc"];
  const sign = direction === "asc" ? 1 : -1;
  const time = (p: T) =>
    field === "publishedAt" && createdForUnpublished ? p.publishedAt ?? p.createdAt : p[field];
  return sorted.sort((a, b) => {
    const x = time(a);
    const y = time(b);
    if (x === y) return a.position - b.position;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x - y) * sign;
  });
}

export interface WindowParams {
  limit?: string;
  offset?: string;
  page?: string;
  perPage?: string;
}

export interface BlogWindow {
  limit: number;
  offset: number;
}

function wholeNumber(raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined || !/^\d{1,9}$/.test(raw.trim())) return undefined;
  const n = Number(raw.trim());
  return n >= min && n <= max ? n : undefined;
}

/**
 * perPage wins over limit, page wins over offset; each invalid value falls
 * back (limit to the CRM page size, offset to 0), bounds 1-50 and 0-100000.
 */
export function resolveWindow(params: WindowParams, pageSize: number): BlogWindow {
  const fallbackLimit = wholeNumber(String(pageSize), 1, LIMITS.maxBlogWindow) ??
    LIMITS.defaultBlogPageSize;
  const limit = wholeNumber(params.perPage, 1, LIMITS.maxBlogWindow) ??
    wholeNumber(params.limit, 1, LIMITS.maxBlogWindow) ?? fallbackLimit;
  const page = wholeNumber(params.page, 1, Math.floor(LIMITS.maxBlogOffset / limit) + 1);
  const offset = page !== undefined
    ? (page - 1) * limit
    : wholeNumber(params.offset, 0, LIMITS.maxBlogOffset) ?? 0;
  return { limit, offset };
}

export interface WindowSummary {
  total: number;
  limit: number;
  offset: number;
  page: number | null;
  pages: number;
  hasMore: boolean;
  nextOffset: number | null;
}

export function summarizeWindow(total: number, window: BlogWindow): WindowSummary {
  const { limit, offset } = window;
  const hasMore = offset + limit < total;
  return {
    total,
    limit,
    offset,
    page: offset % limit === 0 ? offset / limit + 1 : null,
    pages: Math.ceil(total / limit),
    hasMore,
    nextOffset: hasMore ? offset + limit : null,
  };
}
