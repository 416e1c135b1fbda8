import { describe, expect, it } from "vitest";
import {
  isVisible,
  nextPublication,
  postStatus,
  resolveWindow,
  sortPosts,
  summarizeWindow,
} from "./blog.ts";

const post = (position: number, publishedAt: number | null, createdAt: number | null = null) => ({
  status: "published" as const,
  publishedAt,
  createdAt,
  savedAt: 0,
  position,
});

describe("a preview's posts", () => {
  it("names each post's state", () => {
    expect(postStatus({ ...post(0, 5), status: "draft" }, 10, true)).toBe("draft");
    expect(postStatus(post(0, 11), 10, true)).toBe("scheduled");
    expect(postStatus({ ...post(0, 9), savedAt: 8 }, 10, false)).toBe("scheduled");
    expect(postStatus(post(0, 10), 10, true)).toBe("published");
    expect(postStatus(post(0, null), 10, true)).toBe("published");
  });

  it("sorts a post without publishedAt by its createdAt in date orders", () => {
    const posts = [post(0, 30), post(1, null, 20), post(2, 10), post(3, null, null)];
    const positions = (list: { position: number }[]) => list.map((p) => p.position);
    expect(positions(sortPosts(posts, "publishedAt:desc", true))).toEqual([0, 1, 2, 3]);
    expect(positions(sortPosts(posts, "publishedAt:asc", true))).toEqual([2, 1, 0, 3]);
    // A site key's list keeps undated posts last.
    expect(positions(sortPosts(posts, "publishedAt:desc"))).toEqual([0, 2, 1, 3]);
  });
});

describe("visibility", () => {
  it("hides drafts whatever their date and future posts until their time", () => {
    expect(isVisible({ ...post(0, 0), status: "draft" }, 10, true)).toBe(false);
    expect(isVisible({ ...post(0, null), status: "draft" }, 10, true)).toBe(false);
    expect(isVisible(post(0, 11), 10, true)).toBe(false);
    expect(isVisible(post(0, 10), 10, true)).toBe(true);
    expect(isVisible(post(0, null), 10, true)).toBe(true);
  });

  it("without scheduling, publishes only posts already due when they were saved", () => {
    expect(isVisible({ ...post(0, 5), savedAt: 8 }, 10, false)).toBe(true);
    expect(isVisible({ ...post(0, 9), savedAt: 8 }, 10, false)).toBe(false);
    expect(isVisible({ ...post(0, 9), savedAt: 8 }, 10, true)).toBe(true);
    expect(isVisible(post(0, null), 10, false)).toBe(true);
  });

  it("finds the next publication, none without scheduling", () => {
    expect(nextPublication([post(0, 5), post(1, 30), post(2, 20)], 10, true)).toBe(20);
    expect(nextPublication([post(0, 5)], 10, true)).toBeNull();
    expect(nextPublication([{ ...post(0, 50), status: "draft" }], 10, true)).toBeNull();
    expect(nextPublication([post(0, 30)], 10, false)).toBeNull();
  });
});

describe("sortPosts", () => {
  const posts = [post(0, 20, 3), post(1, null, 1), post(2, 10, 2), post(3, 20, 4)];
  it("keeps manifest order for manual", () => {
    expect(sortPosts(posts, "manual").map((p) => p.position)).toEqual([0, 1, 2, 3]);
  });
  it("sorts by publication date, undated last, ties in manifest order", () => {
    expect(sortPosts(posts, "publishedAt:desc").map((p) => p.position)).toEqual([0, 3, 2, 1]);
    expect(sortPosts(posts, "publishedAt:asc").map((p) => p.position)).toEqual([2, 0, 3, 1]);
  });
  it("sorts by creation date", () => {
    expect(sortPosts(posts, "createdAt:asc").map((p) => p.position)).toEqual([1, 2, 0, 3]);
    expect(sortPosts(posts, "createdAt:desc").map((p) => p.position)).toEqual([3, 0, 2, 1]);
  });
});

describe("resolveWindow", () => {
  it("defaults to the CRM page size and offset 0", () => {
    expect(resolveWindow({}, 12)).toEqual({ limit: 12, offset: 0 });
    expect(resolveWindow({}, 5)).toEqual({ limit: 5, offset: 0 });
  });

  it("takes limit and offset within bounds", () => {
    expect(resolveWindow({ limit: "3", offset: "4" }, 12)).toEqual({ limit: 3, offset: 4 });
    expect(resolveWindow({ limit: "50", offset: "100000" }, 12)).toEqual({
      limit: 50,
      offset: 100000,
    });
  });

  it("falls back on invalid values", () => {
    for (const limit of ["0", "51", "-1", "abc", "2.5", "", " "]) {
      expect(resolveWindow({ limit }, 12).limit).toBe(12);
    }
    for (const offset of ["-1", "100001", "x", "1.5"]) {
      expect(resolveWindow({ offset }, 12).offset).toBe(0);
    }
  });

  it("lets perPage win over limit and page win over offset", () => {
    expect(resolveWindow({ limit: "5", perPage: "3" }, 12)).toEqual({ limit: 3, offset: 0 });
    expect(resolveWindow({ page: "3", perPage: "4", offset: "1" }, 12)).toEqual({
      limit: 4,
      offset: 8,
    });
    expect(resolveWindow({ page: "2" }, 12)).toEqual({ limit: 12, offset: 12 });
    expect(resolveWindow({ page: "0", offset: "7" }, 12)).toEqual({ limit: 12, offset: 7 });
    expect(resolveWindow({ perPage: "99", limit: "4" }, 12)).toEqual({ limit: 4, offset: 0 });
  });
});

describe("summarizeWindow", () => {
  it("computes pages, page, hasMore and nextOffset", () => {
    expect(summarizeWindow(10, { limit: 3, offset: 0 })).toEqual({
      total: 10,
      limit: 3,
      offset: 0,
      page: 1,
      pages: 4,
      hasMore: true,
      nextOffset: 3,
    });
    expect(summarizeWindow(10, { limit: 3, offset: 9 })).toEqual({
      total: 10,
      limit: 3,
      offset: 9,
      page: 4,
      pages: 4,
      hasMore: false,
      nextOffset: null,
    });
    expect(summarizeWindow(10, { limit: 3, offset: 4 }).page).toBeNull();
    expect(summarizeWindow(0, { limit: 12, offset: 0 })).toEqual({
      total: 0,
      limit: 12,
      offset: 0,
      page: 1,
      pages: 0,
      hasMore: false,
      nextOffset: null,
    });
  });
});
