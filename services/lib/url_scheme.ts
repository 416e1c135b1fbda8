/**
 * Which URLs may be stored and handed back to websites: http, https, or a
 * relative reference (a path). Anything else (`javascript:`, `data:`,
 * `vbscript:`, `file:`...) can run code or read local files when a site puts
 * it into a link or an image, so it is never stored.
 */

const ALLOWED_PROTOCOLS: ReadonlySet<string> = new Set(["http:", "https:"]);

/**
 * The text as browsers read it: they ignore ASCII tab and newline anywhere
 * and leading control characters and spaces, so `java\tscript:` is
 * `javascript:` to them (WHATWG URL, "scheme state").
 */
function asBrowsersRead(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/^[\u0000-\u0020]+/, "").replace(/[\t\n\r]/g, "");
}

/** The scheme of text as asBrowsersRead gives it, lowercased, or null for a relative reference. */
function schemeOf(stripped: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(stripped);
  return match ? `${match[1].toLowerCase()}:` : null;
}

/**
 * True when text is an absolute http(s) URL or a relative path (`/a`, `a/b`,
 * `?q`, `#f`). A scheme-relative `//host/path` is refused: it is not a path,
 * and what it points to depends on the page it lands on.
 */
export function isStorableUrl(text: string): boolean {
  const stripped = asBrowsersRead(text);
  const scheme = schemeOf(stripped);
  if (scheme !== null) {
    if (!ALLOWED_PROTOCOLS.has(scheme)) return false;
    return URL.canParse(text);
  }
  return !/^[\\/]{2}/.test(stripped);
}
