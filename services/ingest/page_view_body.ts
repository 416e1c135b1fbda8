/**
 * A page view as the widget sends it to POST /marketing/view:
 * { v, s, u, t, r, sw, sh, vw, vh, pr, l, tz, c, a }. Only the page URL is
 * required; any other field of the wrong type is stored as unknown (null),
 * since a beacon cannot be told what was wrong.
 */
import {
  type Body,
  invalidBody,
  isObject,
  MAX_URL,
  optionalBrowserId,
  RefusedError,
} from "./body_fields.ts";
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

function dimension(value: unknown): number | null {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_SIZE
    ? value as number
    : null;
}

/** "1920x1080", or null unless both sides are known. */
function size(width: unknown, height: unknown): string | null {
  const w = dimension(width);
  const h = dimension(height);
  return w === null || h === null ? null : `${w}x${h}`;
}

function pixelRatio(value: unknown): number | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 20) return null;
  return Math.round(value * 1000) / 1000;
}

function adCookies(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(value)) {
    if (!AD_COOKIE.test(name)) continue;
    const text = textOrNull(raw, MAX_COOKIE);
    if (text !== null) out[name] = text;
  }
  return out;
}

export function parsePageViewBody(body: unknown): PageViewInput {
  if (!isObject(body)) throw new RefusedError({ reason: "invalid_body" });
  const rawUrl = cleanText(body.u);
  const url = rawUrl ? cleanUrl(rawUrl) : null;
  if (!rawUrl || url === null) throw invalidBody("u", "the page URL is required");
  const rawReferrer = textOrNull(body.r, MAX_URL * 2);
  const referrer = rawReferrer === null ? null : cleanUrl(rawReferrer);
  return {
    visitorId: safeId(body, "v"),
    sessionId: safeId(body, "s"),
    rawUrl,
    url: truncate(url, MAX_URL),
    title: textOrNull(body.t, MAX_TITLE),
    rawLanding: textOrNull(body.a, MAX_URL * 2),
    rawReferrer,
    referrer: referrer === null ? null : truncate(referrer, MAX_URL),
    screen: size(body.sw, body.sh),
    viewport: size(body.vw, body.vh),
    pixelRatio: pixelRatio(body.pr),
    language: textOrNull(body.l, 35),
    timeZone: textOrNull(body.tz, 64),
    adCookies: adCookies(body.c),
  };
}

/** A malformed visitor or session id is stored as unknown rather than refusing the view. */
function safeId(body: Body, name: string): string | null {
  try {
    return optionalBrowserId(body, [name]);
  } catch {
    return null;
  }
}
