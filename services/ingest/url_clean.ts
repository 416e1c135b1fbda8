/**
 * Privacy handling of URLs before they are stored (page, referrer, landing
 * and event URLs): the #fragment goes, and so does every query parameter
 * that commonly carries a secret or a personal address. Campaign parameters
 * (UTM tags, ad click ids, the ad-link code `dl`) and `code` stay. Kept query
 * pieces stay as sent; the rest is normalised by the WHATWG URL parser.
 */

import { isStorableUrl } from "../lib/url_scheme.ts";
import { boundedMemo } from "../lib/memo.ts";

/** Parameter names removed from every stored URL (compared without case). */
export const SENSITIVE_PARAMS: ReadonlySet<string> = new Set([
  "token",
  "access_token",
  "id_token",
  "refresh_token",
  "auth_token",
  "auth",
  "password",
  "pass",
  "passwd",
  "pwd",
  "email",
  "e-mail",
  "mail",
  "key",
  "api_key",
  "apikey",
  "secret",
  "client_secret",
  "otp",
  "session",
  "sessionid",
  "jwt",
]);

export const UTM_PARAMS = [
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
] as const;
export const CLICK_ID_PARAMS = ["gclid", "gbraid", "wbraid", "yclid", "fbclid", "msclkid"] as const;
/** The ad-link code: 10 characters identifying a tagged link. */
export const AD_LINK_PARAM = "dl";
const AD_LINK = /^[A-Za-z0-9_-]{10}$/;

const KEPT: ReadonlySet<string> = new Set<string>([
  "code",
  AD_LINK_PARAM,
  ...UTM_PARAMS,
  ...CLICK_ID_PARAMS,
]);

/** True when a query parameter of this name must not be stored. */
export function isSensitiveParam(name: string): boolean {
  const lower = name.toLowerCase();
  if (KEPT.has(lower)) return false;
  return SENSITIVE_PARAMS.has(lower) || lower.endsWith("_token");
}

function decodeName(raw: string): string {
  const name = raw.split("=", 1)[0].replaceAll("+", " ");
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** A query string ("?a=1&b=2" or "a=1") without its sensitive parameters, raw pieces kept. */
export function cleanQuery(search: string): string {
  const raw = search.startsWith("?") ? search.slice(1) : search;
  if (raw === "") return "";
  const kept = raw.split("&").filter((piece) =>
    piece !== "" && !isSensitiveParam(decodeName(piece))
  );
  return kept.join("&");
}

const RELATIVE_BASE = "http://relative.invalid";
const RELATIVE_ORIGIN = new URL(RELATIVE_BASE).origin;

/**
 * The URL as it may be stored, or null when it is not a URL at all or not one
 * that may be stored: only http and https URLs are cleaned and kept, and a
 * relative one (a server event's "/checkout") is cleaned and stays relative;
 * `javascript:`, `data:`, an app's `android-app:` and the like are dropped.
 */
export const cleanUrl: (raw: string) => string | null = boundedMemo(cleanUrlOf, {
  // A site's pages and event URLs repeat; parsing one costs a few µs.
  maxEntries: 5_000,
  maxInputLength: 1_024,
});

function cleanUrlOf(raw: string): string | null {
  const text = raw.trim();
  if (text === "" || !isStorableUrl(text)) return null;
  let url: URL;
  let relative = false;
  try {
    url = new URL(text);
  } catch {
    try {
      url = new URL(text, RELATIVE_BASE);
      relative = true;
    } catch {
      return null;
    }
  }
  // A relative reference stays on the stand-in origin; anything else is not a path.
  if (relative && url.origin !== RELATIVE_ORIGIN) return null;
  const query = cleanQuery(url.search);
  url.hash = "";
  url.search = "";
  const base = relative ? url.href.slice(RELATIVE_BASE.length) : url.href;
  return query ? `${base}?${query}` : base;
}

export interface Campaign {
  utm: Record<(typeof UTM_PARAMS)[number], string | null>;
  /** The ad click ids present, by name. */
  clickIds: Record<string, string>;
  /** The 10-character ad-link code, or null when absent or malformed. */
  adLink: string | null;
}

const MAX_CAMPAIGN_VALUE = 500;

function firstValue(params: URLSearchParams, name: string): string | null {
  const value = params.get(name);
  if (value === null) return null;
  const trimmed = value.trim().replaceAll("\u0000", "").toWellFormed();
  return trimmed === "" ? null : Array.from(trimmed).slice(0, MAX_CAMPAIGN_VALUE).join("");
}

/** UTM tags, click ids and the ad-link code read from a page URL's query string. */
export function campaignOf(pageUrl: string | null | undefined): Campaign {
  let params = new URLSearchParams();
  if (pageUrl) {
    try {
      params = new URL(pageUrl, RELATIVE_BASE).searchParams;
    } catch {
      // Not a URL: no campaign.
    }
  }
  const utm = Object.fromEntries(UTM_PARAMS.map((n) => [n, firstValue(params, n)])) as Campaign[
    "utm"
  ];
  const clickIds: Record<string, string> = {};
  for (const name of CLICK_ID_PARAMS) {
    const value = firstValue(params, name);
    if (value !== null) clickIds[name] = value;
  }
  const dl = firstValue(params, AD_LINK_PARAM);
  return { utm, clickIds, adLink: dl !== null && AD_LINK.test(dl) ? dl : null };
}

/** True when the campaign carries anything at all. */
export function hasCampaign(campaign: Campaign): boolean {
  return campaign.adLink !== null || Object.keys(campaign.clickIds).length > 0 ||
    Object.values(campaign.utm).some((v) => v !== null);
}
