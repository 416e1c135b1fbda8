import { describe, expect, it } from "vitest";
import { etagMatches, etagOf } from "./etag.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("etagOf", () => {
  it("gives the same bytes the same quoted tag, other bytes another", () => {
    const tag = etagOf(bytes('{"a":1}'));
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf(bytes('{"a":1}'))).toBe(tag);
    expect(etagOf(bytes('{"a":2}'))).not.toBe(tag);
  });
});

describe("etagMatches", () => {
  const tag = '"abc"';
  it("matches the tag, a list holding it, its weak form and *", () => {
    expect(etagMatches('"abc"', tag)).toBe(true);
    expect(etagMatches('"x", "abc"', tag)).toBe(true);
    expect(etagMatches('W/"abc"', tag)).toBe(true);
    expect(etagMatches(" * ", tag)).toBe(true);
  });

  it("does not match another tag or no header", () => {
    expect(etagMatches('"abd"', tag)).toBe(false);
    expect(etagMatches(null, tag)).toBe(false);
    expect(etagMatches("", tag)).toBe(false);
  });
});
