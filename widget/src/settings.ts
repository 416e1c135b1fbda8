/// <reference lib="dom" />
/** What the script tag asks for, read from its data-* attributes. */

export type SpaMode = "" | "hash" | "off";

export interface Settings {
  /** Origin the collection routes live on: data-api, else the script's own origin. */
  api: string;
  spa: SpaMode;
  consentRequired: boolean;
}

export function readSettings(doc: Document): Settings | undefined {
  const script = (doc.currentScript ?? doc.querySelector('script[src*="widget.js"]')) as
    | HTMLScriptElement
    | null;
  if (!script) return undefined;
  const attr = (name: string) => script.getAttribute("data-" + name) || "";
  return {
    api: (attr("api") || new URL(script.src, location.href).origin).replace(/\/+$/, ""),
    spa: attr("spa") as SpaMode,
    consentRequired: attr("consent") == "required",
  };
}
