import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, isNewSince, namesOf, type RecordedChange } from "./feed.ts";

const none = { pages: [], sections: [], blocks: [], posts: [] };

describe("changes feed cursors", () => {
  it("reads back what it wrote, for its own site only", () => {
    const cursor = encodeCursor("acme", { seq: 42, at: Date.UTC(2026, 0, 1) });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{1,200}$/);
    expect(decodeCursor("acme", cursor)).toEqual({ seq: 42, at: Date.UTC(2026, 0, 1) });
    expect(decodeCursor("other", cursor)).toBeUndefined();
  });

  it("refuses a changed, cut, padded or made-up cursor", () => {
    const cursor = encodeCursor("acme", { seq: 7, at: 1_000 });
    const flipped = cursor.slice(0, 5) + (cursor[5] === "A" ? "B" : "A") + cursor.slice(6);
    for (const text of [flipped, cursor.slice(1), cursor + "A", cursor + "=", "", "x", "!!!!"]) {
      expect(decodeCursor("acme", text), text).toBeUndefined();
    }
    expect(decodeCursor("acme", "a".repeat(201))).toBeUndefined();
  });
});

describe("changes since a cursor", () => {
  const change = (seq: number, at: number, posts: string[] = []): RecordedChange => ({
    seq,
    at,
    names: { ...none, posts },
  });

  it("takes what was recorded after the cursor, or in the feed only after its time", () => {
    const since = { seq: 10, at: 1_000 };
    expect(isNewSince(change(11, 900), since, 2_000)).toBe(true);
    expect(isNewSince(change(10, 900), since, 2_000)).toBe(false);
    // A scheduled post recorded before the cursor, published after it.
    expect(isNewSince(change(5, 1_500), since, 2_000)).toBe(true);
    // ... but not before its time.
    expect(isNewSince(change(5, 2_500), since, 2_000)).toBe(false);
    expect(isNewSince(change(12, 2_500), since, 2_000)).toBe(false);
  });

  it("merges the names of several changes, sorted, without repeats", () => {
    expect(namesOf([
      { seq: 1, at: 0, names: { pages: ["b", "a"], sections: [], blocks: ["x/y"], posts: [] } },
      { seq: 2, at: 0, names: { pages: ["a"], sections: ["s"], blocks: [], posts: ["p"] } },
    ])).toEqual({ pages: ["a", "b"], sections: ["s"], blocks: ["x/y"], posts: ["p"] });
  });
});
