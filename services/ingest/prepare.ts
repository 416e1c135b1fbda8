/**
 * From an IngestItem (site, time, client IP, user agent, typed body) to a row the
 * writer can store, or to an answer without storing: validation, parameter
 * normalisation, enrichment (location from the full IP, then the IP
 * truncated; device, browser, OS and bot flag; channel and campaign) and the
 * privacy cleaning of URLs. Pure apart from the event types it is given.
 */
import { Code } from "../lib/errors.ts";
import { applyEventType, parseEventBody } from "./event_body.ts";
import { parsePageViewBody } from "./page_view_body.ts";
import { leadRow, parseLeadBody } from "./lead_body.ts";
import { type Refusal, RefusedError } from "./body_fields.ts";
import type { IngestItem, PageView } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import type { TypesOfSite } from "./event_types.ts";
import type { GeoLookup } from "./geo.ts";
import type { ReferrerList } from "./referrers.ts";
import { describeAgent } from "./user_agent.ts";
import { truncateIp } from "../lib/ip.ts";
import { campaignOf } from "./url_clean.ts";
import { classifyChannel } from "./channel.ts";
import type { Attribution, WriteItem } from "./rows.ts";
import { boundedMemo } from "../lib/memo.ts";

export type Source = "browser" | "server";

export interface RawItem {
  source: Source;
  siteId: string;
  receivedAtMs: number;
  clientIp: string;
  userAgent: string;
  /** The page view, event or lead sent. */
  body: Exclude<IngestItem["body"], { case: undefined }>;
}

export type Prepared =
  | { write: WriteItem }
  | { dropped: true }
  | { refused: Refusal; code: Code };

export interface Enrichment {
  geo: GeoLookup;
  referrers: ReferrerList;
}

/** Refusals and the Connect code the gateway turns into an HTTP status (400 for all of them). */
const CODES: Record<string, Code> = {
  invalid_body: Code.InvalidArgument,
  invalid_event_name: Code.InvalidArgument,
  unknown_event: Code.InvalidArgument,
};

function refuse(refusal: Refusal, source: Source): Prepared {
  // A browser is told only that its body was malformed; an invalid or undeclared
  // event name is dropped silently (204), as the specification asks.
  if (source === "browser" && refusal.reason !== "invalid_body") return { dropped: true };
  return { refused: refusal, code: CODES[refusal.reason] ?? Code.InvalidArgument };
}

/**
 * The stored form of a receive time. A batch's items mostly share their
 * millisecond, so the last one is remembered (formatting costs about 1 µs).
 */
let lastTime = { ms: NaN, iso: "" };
function isoTime(ms: number): string {
  if (ms !== lastTime.ms) lastTime = { ms, iso: new Date(ms).toISOString() };
  return lastTime.iso;
}

export function prepareItem(
  item: RawItem,
  types: TypesOfSite | undefined,
  enrichment: Enrichment,
): Prepared {
  try {
    const { body } = item;
    const receivedAt = isoTime(item.receivedAtMs);
    if (body.case === "pageView") {
      return { write: pageView(item, body.value, enrichment) };
    }
    if (body.case === "event") {
      const input = parseEventBody(body.value);
      const typed = applyEventType(input, types?.get(input.name));
      return {
        write: {
          kind: "event",
          row: {
            site_id: item.siteId,
            received_at: receivedAt,
            name: input.name,
            event_id: input.eventId,
            visitor_id: input.visitorId,
            session_id: input.sessionId,
            url: input.url,
            params: typed.params,
            value: typed.value,
            currency: typed.currency,
            source: item.source,
            bot: item.source === "browser" ? describeAgent(item.userAgent).bot : null,
          },
        },
      };
    }
    const row = leadRow(parseLeadBody(body.value), {
      id: crypto.randomUUID(),
      siteId: item.siteId,
      receivedAt,
      source: item.source,
    });
    return { write: { kind: "lead", row } };
  } catch (error) {
    if (error instanceof RefusedError) return refuse(error.refusal, item.source);
    throw error;
  }
}

function pageView(item: RawItem, body: PageView, enrichment: Enrichment): WriteItem {
  const receivedAt = isoTime(item.receivedAtMs);
  const view = parsePageViewBody(body);
  // Attribution comes from where the visit arrived: the landing URL when the
  // widget says the page moved before this first view, else the page itself.
  const arrivedAt = view.rawLanding ?? view.rawUrl;
  const attribution = attributionMemo(enrichment.referrers)(
    JSON.stringify([arrivedAt, view.rawReferrer]),
  );
  const agent = describeAgent(item.userAgent);
  return {
    kind: "view",
    row: {
      site_id: item.siteId,
      received_at: receivedAt,
      visitor_id: view.visitorId,
      session_id: view.sessionId,
      url: view.url,
      title: view.title,
      referrer: view.referrer,
      attribution,
      ad_cookies: view.adCookies,
      screen: view.screen,
      viewport: view.viewport,
      pixel_ratio: view.pixelRatio,
      language: view.language,
      time_zone: view.timeZone,
      // Location from the full address; only the truncated address is stored.
      country: enrichment.geo.country(item.clientIp),
      device: agent.device,
      browser: agent.browser,
      os: agent.os,
      bot: agent.bot,
      ip: truncateIp(item.clientIp),
    },
  };
}

/** A visit's channel and campaign from where it arrived and its referrer. */
function attributionOf(
  arrivedAt: string,
  referrer: string | null,
  referrers: ReferrerList,
): Attribution {
  const campaign = campaignOf(arrivedAt);
  return {
    channel: classifyChannel({ campaign, referrer, pageUrl: arrivedAt }, referrers),
    utm_source: campaign.utm.utm_source,
    utm_medium: campaign.utm.utm_medium,
    utm_campaign: campaign.utm.utm_campaign,
    utm_term: campaign.utm.utm_term,
    utm_content: campaign.utm.utm_content,
    ad_link: campaign.adLink,
    click_ids: campaign.clickIds,
  };
}

/**
 * attributionOf remembered per referrer list, keyed by the JSON of
 * `[arrivedAt, referrer]`: a site's visits arrive at a few landing pages from
 * a few referrers, and each answer costs two URL parses and a list lookup.
 * The answers are shared by the rows that carry them and never changed.
 */
const attributionMemos = new WeakMap<ReferrerList, (key: string) => Attribution>();
function attributionMemo(referrers: ReferrerList): (key: string) => Attribution {
  let memo = attributionMemos.get(referrers);
  if (!memo) {
    memo = boundedMemo((key) => {
      const [arrivedAt, referrer] = JSON.parse(key) as [string, string | null];
      return attributionOf(arrivedAt, referrer, referrers);
    }, { maxEntries: 5_000, maxInputLength: 2_048 });
    attributionMemos.set(referrers, memo);
  }
  return memo;
}
