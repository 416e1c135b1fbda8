/**
 * Blog HTML is cleaned once, when a post is imported (never on read), with
 * sanitize-html: a maintained allow-list sanitiser. Scripts, event handler
 * attributes, javascript: URLs and unknown tags go; ordinary article markup
 * (headings, lists, links, images, tables, code) stays.
 */
import sanitizeHtml from "sanitize-html";

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags,
    "img",
    "h1",
    "h2",
    "figure",
    "figcaption",
    "picture",
    "source",
  ],
  allowedAttributes: {
    a: ["href", "name", "target", "rel", "title"],
    img: ["src", "srcset", "alt", "title", "width", "height", "loading"],
    source: ["srcset", "type", "media"],
    "*": ["class", "id", "lang", "dir"],
    th: ["colspan", "rowspan", "scope"],
    td: ["colspan", "rowspan"],
  },
  allowedSchemes: ["http", "https", "mailto", "tel"],
  allowedSchemesAppliedToAttributes: ["href", "src", "srcset"],
  allowProtocolRelative: true,
};

export function cleanHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
