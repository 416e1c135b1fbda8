import { describe, expect, it } from "vitest";
import { cleanHtml } from "./sanitize.ts";

describe("cleanHtml", () => {
  it("keeps article markup", () => {
    const html =
      '<h2>Title</h2><p>Hi <a href="https://x.example/">there</a></p><img src="https://c.example/a.png" alt="A">';
    expect(cleanHtml(html)).toBe(html.replace('alt="A">', 'alt="A" />'));
  });

  it("removes scripts, handlers and javascript: links", () => {
    expect(cleanHtml('<p onclick="x()">a</p><script>alert(1)</script>')).toBe("<p>a</p>");
    expect(cleanHtml('<a href="javascript:alert(1)">x</a>')).toBe("<a>x</a>");
    expect(cleanHtml('<img src="x" onerror="alert(1)">')).toBe('<img src="x" />');
  });

  it("is stable when applied twice", () => {
    const once = cleanHtml('<p>a<br>b</p><iframe src="x"></iframe><ul><li>c</li></ul>');
    expect(cleanHtml(once)).toBe(once);
  });
});
