/**
 * Traffic channel of a visit: paid, social, organic, referral, email or
 * direct. The rules, first match wins (README "Traffic channels"):
 *
 * 1. A Google, Microsoft or Yandex ad click id (gclid, gbraid, wbraid,
 *    msclkid, yclid) → paid. These ids are added to ad clicks only.
 * 2. utm_medium, without case: cpc, ppc, cpm, cpv, cpa, cpp, display, banner,
 *    retargeting, remarketing, ad, ads or anything starting with "paid" →
 *    paid; email, e-mail, e_mail, mail, newsletter → email; social,
 *    social-network, social-media, social_media, sm → social; organic →
 *    organic; referral, affiliate, affiliates, link → referral.
 * 3. utm_source alone (or with another medium): a known email source or
 *    "email"/"newsletter" → email; a social network of the referrer list →
 *    social; any other tagged source → referral.
 * 4. fbclid → social (Facebook adds it to every outbound link, paid or not;
 *    paid Facebook traffic is told apart by its UTM medium, rule 2).
 * 5. The ad-link code dl without a UTM medium → paid.
 * 6. The referrer: none, or the page's own host → direct; a host of the
 *    referrer list: search engine → organic, social network → social,
 *    webmail → email, ad server → paid, anything else it names → referral;
 *    an Android app referrer (android-app://package) is looked up by package;
 *    any other host → referral.
 */
import type { Campaign } from "./url_clean.ts";
import type { ReferrerList, ReferrerMedium } from "./referrers.ts";
import { canonicalHost } from "../lib/formats.ts";

export const CHANNELS = ["paid", "social", "organic", "referral", "email", "direct"] as const;
export type Channel = (typeof CHANNELS)[number];

const PAID_CLICK_IDS = ["gclid", "gbraid", "wbraid", "msclkid", "yclid"];
const PAID_MEDIUM =
  /^(cpc|ppc|cpm|cpv|cpa|cpp|display|banner|retargeting|remarketing|ads?|paid.*)$/;
const EMAIL_MEDIUM = /^(email|e-mail|e_mail|mail|newsletter)$/;
const SOCIAL_MEDIUM = /^(social|social-network|social-media|social_media|sm)$/;
const REFERRAL_MEDIUM = /^(referral|affiliates?|link)$/;

const FROM_LIST: Record<ReferrerMedium, Channel> = {
  search: "organic",
  social: "social",
  email: "email",
  paid: "paid",
  referral: "referral",
  unknown: "referral",
};

export interface ChannelInput {
  campaign: Campaign;
  /** The referrer as sent (before cleaning), or null. */
  referrer: string | null;
  /** The page URL, to tell the site's own pages from other referrers. */
  pageUrl: string | null;
}

function hostOf(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.hostname ? canonicalHost(parsed.hostname) : undefined;
  } catch {
    return undefined;
  }
}

function fromMedium(medium: string): Channel | undefined {
  if (PAID_MEDIUM.test(medium)) return "paid";
  if (EMAIL_MEDIUM.test(medium)) return "email";
  if (SOCIAL_MEDIUM.test(medium)) return "social";
  if (medium === "organic") return "organic";
  if (REFERRAL_MEDIUM.test(medium)) return "referral";
  return undefined;
}

function fromSource(source: string, list: ReferrerList): Channel {
  if (/^(e-?mail|newsletter)$/.test(source)) return "email";
  const medium = list.mediumOfSource(source);
  if (medium === "email") return "email";
  if (medium === "social") return "social";
  return "referral";
}

function fromReferrer(referrer: string, pageUrl: string | null, list: ReferrerList): Channel {
  let url: URL;
  try {
    url = new URL(referrer);
  } catch {
    return "direct";
  }
  if (url.protocol === "android-app:") {
    const known = list.lookup(url.hostname);
    return known ? FROM_LIST[known.medium] : "referral";
  }
  const host = url.hostname ? canonicalHost(url.hostname) : "";
  if (host === "") return "direct";
  if (host === hostOf(pageUrl)) return "direct";
  const known = list.lookup(url.hostname, url.pathname);
  return known ? FROM_LIST[known.medium] : "referral";
}

export function classifyChannel(input: ChannelInput, list: ReferrerList): Channel {
  const { campaign } = input;
  if (PAID_CLICK_IDS.some((id) => id in campaign.clickIds)) return "paid";
  const medium = campaign.utm.utm_medium?.toLowerCase();
  const byMedium = medium ? fromMedium(medium) : undefined;
  if (byMedium) return byMedium;
  const source = campaign.utm.utm_source?.toLowerCase();
  if (source) return fromSource(source, list);
  if ("fbclid" in campaign.clickIds) return "social";
  if (campaign.adLink && !medium) return "paid";
  if (!input.referrer) return "direct";
  return fromReferrer(input.referrer, input.pageUrl, list);
}
