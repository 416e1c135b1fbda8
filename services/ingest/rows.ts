/** What the writer stores: rows prepared (validated, normalised, enriched) by prepare.ts. */
import type { ParamValue } from "./params.ts";

/** Where a visit came from; a session keeps that of its first page view. */
export interface Attribution {
  channel: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  ad_link: string | null;
  click_ids: Record<string, string>;
}

export const NO_ATTRIBUTION: Attribution = {
  channel: null,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  utm_term: null,
  utm_content: null,
  ad_link: null,
  click_ids: {},
};

export interface PageViewRow {
  site_id: string;
  /** ISO 8601 */
  received_at: string;
  visitor_id: string | null;
  session_id: string | null;
  url: string;
  title: string | null;
  referrer: string | null;
  /** The page view's own attribution (from its URL and referrer). */
  attribution: Attribution;
  ad_cookies: Record<string, string>;
  screen: string | null;
  viewport: string | null;
  pixel_ratio: number | null;
  language: string | null;
  time_zone: string | null;
  country: string | null;
  device: string | null;
  browser: string | null;
  os: string | null;
  bot: boolean;
  ip: string | null;
}

export interface EventRow {
  site_id: string;
  received_at: string;
  name: string;
  event_id: string | null;
  visitor_id: string | null;
  session_id: string | null;
  url: string | null;
  params: Record<string, ParamValue>;
  value: number | null;
  currency: string | null;
  source: "browser" | "server";
  bot: boolean | null;
}

export interface LeadRow {
  id: string;
  site_id: string;
  received_at: string;
  lead_id: string | null;
  source: "browser" | "server";
  form: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  message: string | null;
  fields: Record<string, ParamValue>;
  visitor_id: string | null;
  session_id: string | null;
  url: string | null;
}

export type WriteItem =
  | { kind: "view"; row: PageViewRow }
  | { kind: "event"; row: EventRow }
  | { kind: "lead"; row: LeadRow };

export interface WriteResult {
  duplicate: boolean;
  /** The lead's id (leads only). */
  id?: string;
}
