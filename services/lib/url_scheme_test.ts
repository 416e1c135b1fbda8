import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isStorableUrl } from "./url_scheme.ts";

describe("isStorableUrl", () => {
  it("accepts http, https and relative paths", () => {
    for (
      const url of [
        "https://a.example/x?y=1#z",
        "HTTP://A.EXAMPLE",
        "/checkout?step=2",
        "page.html",
        "a/b",
        "?q=1",
        "#top",
        "",
      ]
    ) expect(isStorableUrl(url), url).toBe(true);
  });

  it("refuses every other scheme, disguised as browsers read them, and scheme-relative URLs", () => {
    for (
      const url of [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "\u0001javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "mailto:a@b.example",
        "android-app://com.google.android.gm/",
        "//evil.example/x",
        "\\\\evil.example/x",
        "/\\evil.example/x",
        "https://[bad",
      ]
    ) expect(isStorableUrl(url), JSON.stringify(url)).toBe(false);
  });

  it("never accepts a string a browser would run as javascript:", () => {
    const noise = fc.constantFrom("", " ", "\t", "\n", "\r", "\u0000", "\u001f");
    fc.assert(
      fc.property(
        fc.array(noise, { maxLength: 3 }),
        fc.array(fc.tuple(noise, fc.boolean()), { minLength: 10, maxLength: 10 }),
        fc.string(),
        (lead, inner, rest) => {
          const letters = [..."javascript"].map((ch, i) =>
            inner[i][0].replace(/[^\t\n\r]/g, "") + (inner[i][1] ? ch.toUpperCase() : ch)
          );
          const text = lead.join("") + letters.join("") + ":" + rest;
          // What a browser sees once it drops tab and newline and leading C0 and space.
          // deno-lint-ignore no-control-regex
          const seen = text.replace(/^[\u0000-\u0020]+/, "").replace(/[\t\n\r]/g, "");
          expect(seen.toLowerCase().startsWith("javascript:")).toBe(true);
          expect(isStorableUrl(text)).toBe(false);
        },
      ),
    );
  });
});
