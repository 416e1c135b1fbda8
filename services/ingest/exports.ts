/**
 * Reading stored rows back, oldest first, a page at a time (keyset paging on
 * received_at and a sequence number), so an export of any size streams with
 * bounded memory. Field names are those of docs/analytics.md (exported fields); unknown values are null.
 */
import type { Queryable, Row } from "../lib/db/mod.ts";

export type ExportKind = "events" | "page_views" | "leads";

const iso = (value: unknown) => new Date(value as string | Date).toISOString();

const UTM = (r: Row) => ({
  utmSource: r.utm_source ?? null,
  utmMedium: r.utm_medium ?? null,
  utmCampaign: r.utm_campaign ?? null,
  utmTerm: r.utm_term ?? null,
  utmContent: r.utm_content ?? null,
});

const toEvent = (r: Row) => ({
  name: r.name,
  eventId: r.event_id ?? null,
  visitorId: r.visitor_id ?? null,
  sessionId: r.session_id ?? null,
  url: r.url ?? null,
  params: r.params ?? {},
  value: r.value === null || r.value === undefined ? null : Number(r.value),
  currency: r.currency ?? null,
  source: r.source,
  channel: r.channel ?? null,
  ...UTM(r),
  adLink: r.ad_link ?? null,
  receivedAt: iso(r.received_at),
});

const toPageView = (r: Row) => ({
  visitorId: r.visitor_id ?? null,
  sessionId: r.session_id ?? null,
  url: r.url,
  title: r.title ?? null,
  referrer: r.referrer ?? null,
  ...UTM(r),
  clickIds: r.click_ids ?? {},
  adLink: r.ad_link ?? null,
  adCookies: r.ad_cookies ?? {},
  screen: r.screen ?? null,
  viewport: r.viewport ?? null,
  pixelRatio: r.pixel_ratio ?? null,
  language: r.language ?? null,
  timeZone: r.time_zone ?? null,
  country: r.country ?? null,
  device: r.device ?? null,
  browser: r.browser ?? null,
  os: r.os ?? null,
  channel: r.channel ?? null,
  newVisitor: r.new_visitor ?? null,
  bot: r.bot,
  ip: r.ip ?? null,
  receivedAt: iso(r.received_at),
});

const toLead = (r: Row) => ({
  id: r.id,
  leadId: r.lead_id ?? null,
  source: r.source,
  form: r.form ?? null,
  name: r.name ?? null,
  email: r.email ?? null,
  phone: r.phone ?? null,
  message: r.message ?? null,
  fields: r.fields ?? {},
  visitorId: r.visitor_id ?? null,
  sessionId: r.session_id ?? null,
  url: r.url ?? null,
  channel: r.channel ?? null,
  ...UTM(r),
  adLink: r.ad_link ?? null,
  receivedAt: iso(r.received_at),
});

const SHAPES: Record<ExportKind, { columns: string; map: (r: Row) => unknown }> = {
  events: {
    columns: `name, event_id, visitor_id, session_id, url, params, value::float8 as value,
      currency, source, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
      ad_link`,
    map: toEvent,
  },
  page_views: {
    columns: `visitor_id, session_id, url, title, referrer, utm_source, utm_medium,
      utm_campaign, utm_term, utm_content, click_ids, ad_link, ad_cookies, screen, viewport,
      pixel_ratio, language, time_zone, country, device, browser, os, channel, new_visitor, bot,
      ip`,
    map: toPageView,
  },
  leads: {
    columns: `id::text as id, lead_id, source, form, name, email, phone, message, fields,
      visitor_id, session_id, url, channel, utm_source, utm_medium, utm_campaign, utm_term,
      utm_content, ad_link`,
    map: toLead,
  },
};

export const EXPORT_PAGE = 1000;
export const MAX_EXPORT_PAGE = 10_000;

export interface ExportPage {
  /** One JSON text per row. */
  rows: string[];
  /** Where the next page starts; empty when this page was the last. */
  nextCursor: string;
}

const START = ["-infinity", "0"];

/**
 * The cursor travels as Postgres text of received_at and seq, so no precision
 * is lost (the SQL casts from text: postgres.js would pass a timestamptz
 * parameter through a JavaScript Date, which keeps milliseconds only).
 */
function decodeCursor(cursor: string): string[] {
  if (cursor === "") return START;
  const parts = cursor.split("|");
  if (parts.length !== 2 || !/^\d+$/.test(parts[1])) throw new Error("malformed export cursor");
  return parts;
}

/** One page of rows, oldest first (keyset paging on received_at and seq). */
export async function exportPage(
  db: Queryable,
  kind: ExportKind,
  siteId: string,
  options: { sinceMs?: number; cursor?: string; pageSize?: number } = {},
): Promise<ExportPage> {
  const shape = SHAPES[kind];
  const since = options.sinceMs === undefined
    ? "-infinity"
    : new Date(options.sinceMs).toISOString();
  const [at, seq] = decodeCursor(options.cursor ?? "");
  const pageSize = Math.min(MAX_EXPORT_PAGE, Math.max(1, options.pageSize || EXPORT_PAGE));
  const rows = await db.query(
    `select received_at::text as cursor_at, seq::text as cursor_seq, received_at,
            ${shape.columns}
       from ingest.${kind}
      where site_id = $1 and received_at >= $2::text::timestamptz
        and (received_at, seq) > ($3::text::timestamptz, $4::text::bigint)
      order by received_at, seq
      limit $5`,
    [siteId, since, at, seq, pageSize],
  );
  const last = rows[rows.length - 1];
  return {
    rows: rows.map((r) => JSON.stringify(shape.map(r))),
    nextCursor: rows.length < pageSize ? "" : `${last.cursor_at}|${last.cursor_seq}`,
  };
}
