/**
 * A page view as the widget sends it to POST /marketing/view
 * ({ v, s, u, t, r, sw, sh, vw, vh, pr, l, tz, c, a }, mapped to typed
 * fields by the gateway). Only the page URL is required; any other field of
 * the wrong type or out of its range is stored as unknown (null), since a
 * beacon cannot be told what was wrong.
 */
import type { PageView } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { cleanId, invalidBody, MAX_URL } from "./body_fields.ts";
import { cleanText, textOrNull, truncate } from "./text.ts";
import { cleanUrl } from "./url_clean.ts";

export interface PageViewInput {
  visitorId: string | null;
  sessionId: string | null;
  /** The page URL as sent (campaign parameters are read from it). */
  rawUrl: string;
  /** The page URL as stored. */
  url: string;
  title: string | null;
  /**
   * The URL the document was opened at (`a`), sent with a document's first
   * page view when the page moved before it could be counted (consent given
   * after a client-side navigation): its campaign and channel are the visit's.
   * Never stored itself.
   */
  rawLanding: string | null;
  /** The referrer as sent, for the channel; null when empty. */
  rawReferrer: string | null;
  referrer: string | null;
  screen: string | null;
  viewport: string | null;
  pixelRatio: number | null;
  language: string | null;
  timeZone: string | null;
  adCookies: Record<string, string>;
}

const MAX_TITLE = 500;
const MAX_SIZE = 100_000;
const AD_COOKIE = /^(_ga|_ym_uid|_fbp|_fbc|_gcl_[A-Za-z0-9_]{1,32})$/;
const MAX_COOKIE = 256;

function dimension(value: number | undefined): number | null {
  return value !== undefined && Number.isInteger(value) && value >= 0 && value <= MAX_SIZE
    ? value
    : null;
}

/** "1920x1080", or null unless both sides are known. */
function size(width: number | undefined, height: number | undefined): string | null {
  const w = dimension(width);
  const h = dimension(height);
  return w === null || h === null ? null : `${w}x${h}`;
}

function pixelRatio(value: number | undefined): number | null {
  if (value === undefined || !Number.isFinite(value) || value <= 0 || value > 20) return null;
  return Math.round(value * 1000) / 1000;
}

function adCookies(cookies: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(cookies)) {
    if (!AD_COOKIE.test(name)) continue;
    const text = textOrNull(raw, MAX_COOKIE);
    if (text !== null) out[name] = text;
  }
  return out;
}

export function parsePageViewBody(view: PageView): PageViewInput {
  const rawUrl = cleanText(view.url);
  const url = rawUrl ? cleanUrl(rawUrl) : null;
  if (!rawUrl || url === null) throw invalidBody("u", "the page URL is required");
  const rawReferrer = textOrNull(view.referrer, MAX_URL * 2);
  const referrer = rawReferrer === null ? null : cleanUrl(rawReferrer);
  return {
    visitorId: safeId(view.visitorId),
    sessionId: safeId(view.sessionId),
    rawUrl,
    url: truncate(url, MAX_URL),
    title: textOrNull(view.title, MAX_TITLE),
    rawLanding: textOrNull(view.landingUrl, MAX_URL * 2),
    rawReferrer,
    referrer: referrer === null ? null : truncate(referrer, MAX_URL),
    screen: size(view.screenWidth, view.screenHeight),
    viewport: size(view.viewportWidth, view.viewportHeight),
    pixelRatio: pixelRatio(view.pixelRatio),
    language: textOrNull(view.language, 35),
    timeZone: textOrNull(view.timeZone, 64),
    adCookies: adCookies(view.adCookies),
  };
}

/** A malformed visitor or session id is stored as unknown rather than refusing the view. */
function safeId(id: string | undefined): string | null {
  return id ? cleanId(id) : null;
}
