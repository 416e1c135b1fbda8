/** Identifier formats from the specification and the contract, in one place. */

/** Page, section and block markers: case-sensitive, 2 to 40 of A-Z a-z 0-9 _. */
export const MARKER = /^[A-Za-z0-9_]{2,40}$/;
/** Blog slugs: lowercase a-z, digits and hyphens, up to 120 characters. */
export const SLUG = /^[a-z0-9-]{1,120}$/;
/** Language codes: two lowercase letters, optionally a region part. */
export const LANGUAGE_CODE = /^[a-z]{2}(-[A-Za-z]{2,4})?$/;
/** Site ids in the manifest. */
export const SITE_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
/** Event type names: a Latin letter, then letters, digits, underscores; 64 at most. */
export const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Event parameter keys: as event names, 40 at most. */
export const PARAM_KEY = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;
/** Currencies: 1 to 10 Latin letters or digits. */
export const CURRENCY = /^[A-Za-z0-9]{1,10}$/;
/** Host names accepted as site domains (no port, no scheme). */
export const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const BLOCK_TYPES = [
  "text",
  "html",
  "image",
  "video",
  "link",
  "number",
  "color",
  "date",
  "date_range",
  "boolean",
  "object",
  "array",
] as const;
export type BlockType = typeof BLOCK_TYPES[number];

export const BLOG_ORDERS = [
  "manual",
  "publishedAt:asc",
  "publishedAt:desc",
  "createdAt:asc",
  "createdAt:desc",
] as const;
export type BlogOrder = typeof BLOG_ORDERS[number];

export const PARAM_TYPES = ["string", "number", "boolean"] as const;
export type ParamType = typeof PARAM_TYPES[number];

/** Limits stated by the specification. */
export const LIMITS = {
  maxLanguagesInQuery: 50,
  maxEventTypesActive: 100,
  maxParamsPerEvent: 20,
  maxSecretKeysActive: 5,
  maxWebhooks: 5,
  /** Email reports, and traffic alerts, each (manifest `notifications`). */
  maxNotifications: 10,
  maxBlogWindow: 50,
  maxBlogOffset: 100_000,
  defaultBlogPageSize: 12,
} as const;

/**
 * The IANA time zone a name stands for, in its own letter case
 * ("europe/berlin" is "Europe/Berlin"), or undefined for anything else.
 * Offsets ("+05:00") are not zone names and are refused.
 */
export function ianaTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z]/.test(name)) return undefined;
  try {
    return Temporal.Now.zonedDateTimeISO(name).timeZoneId;
  } catch {
    return undefined;
  }
}

/**
 * One email address as a notification's `to`: a plain local part (no
 * quotes, spaces or angle brackets) at a host name; at most 254 characters.
 */
export const EMAIL_ADDRESS =
  /^(?=.{3,254}$)[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Host of a domain or Origin compared without case and without a leading "www.". */
export function canonicalHost(host: string): string {
  const lower = host.toLowerCase().replace(/\.$/, "");
  return lower.startsWith("www.") ? lower.slice(4) : lower;
}

/** What a webhook may be told about (CONTRACT "Webhooks"). */
export const WEBHOOK_TYPES = [
  "content.published",
  "post.published",
  "lead.created",
  "traffic.spike",
  "traffic.drop",
] as const;
export type WebhookType = typeof WEBHOOK_TYPES[number];
