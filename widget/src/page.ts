/// <reference lib="dom" />
/** What a page view says about the page and the browser. */

const AD_COOKIE = /^(_ga|_gcl_\w+|_ym_uid|_fbp|_fbc)$/;

/** Ad cookies present on the site; only called when consent and GPC allow it. */
export function adCookies(): Record<string, string> {
  const found: Record<string, string> = {};
  for (const part of document.cookie.split(";")) {
    const at = part.indexOf("=");
    const name = part.slice(0, at).trim();
    if (at > 0 && AD_COOKIE.test(name)) {
      try {
        found[name] = decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        found[name] = part.slice(at + 1).trim();
      }
    }
  }
  return found;
}

export function environment() {
  let tz = "";
  try {
    tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch { /* very old browsers */ }
  return {
    sw: screen.width,
    sh: screen.height,
    vw: innerWidth,
    vh: innerHeight,
    pr: devicePixelRatio,
    l: navigator.language,
    tz,
  };
}

/**
 * The CRM's live-editing frame: the site loaded in a frame named
 * "crm-live-edit", or any page whose URL carries the crm_live_edit parameter.
 * Nothing is tracked there.
 */
export function inLiveEditor(): boolean {
  return /[?&]crm_live_edit(=|&|$)/.test(location.search) ||
    (self != top && self.name == "crm-live-edit");
}
