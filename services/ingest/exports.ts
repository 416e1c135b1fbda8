/**
 * Reading stored rows back, oldest first, a page at a time (keyset paging on
 * received_at and a sequence number), so an export of any size streams with
 * bounded memory. Each row becomes its typed export message (EventRow,
 * PageViewRow, LeadRow); unknown values are left unset.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Queryable, Row } from "../lib/db/mod.ts";
import {
  type AttributionSchema,
  type EventRowSchema,
  type LeadRowSchema,
  type PageViewRowSchema,
  Source,
  type StoredMemberSchema,
  type StoredValueSchema,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { type Columns, EVENTS, LEADS, PAGE_VIEWS, selectList, type Table } from "./tables.ts";

export type ExportKind = "events" | "page_views" | "leads";

type EventRowInit = MessageInitShape<typeof EventRowSchema>;
type PageViewRowInit = MessageInitShape<typeof PageViewRowSchema>;
type LeadRowInit = MessageInitShape<typeof LeadRowSchema>;

interface RowOf {
  events: EventRowInit;
  page_views: PageViewRowInit;
  leads: LeadRowInit;
}

/** A nullable column: unset when null, else converted. */
const optional = <T>(value: unknown, as: (value: unknown) => T): T | undefined =>
  value === null || value === undefined ? undefined : as(value);

const text = (value: unknown) => optional(value, String);

const receivedAt = (r: Row) => timestampFromDate(new Date(r.received_at as string | Date));

const source = (r: Row) => r.source === "browser" ? Source.BROWSER : Source.SERVER;

const attribution = (r: Row): MessageInitShape<typeof AttributionSchema> => ({
  channel: text(r.channel),
  utmSource: text(r.utm_source),
  utmMedium: text(r.utm_medium),
  utmCampaign: text(r.utm_campaign),
  utmTerm: text(r.utm_term),
  utmContent: text(r.utm_content),
  adLink: text(r.ad_link),
});

function storedValue(value: unknown): MessageInitShape<typeof StoredValueSchema> {
  switch (typeof value) {
    case "string":
      return { kind: { case: "stringValue", value } };
    case "number":
      return { kind: { case: "numberValue", value } };
    case "boolean":
      return { kind: { case: "boolValue", value } };
    default:
      // The writer stores parameters and lead fields normalised to these three types.
      throw new Error(`a stored value of type ${value === null ? "null" : typeof value}`);
  }
}

/** A jsonb object of parameters or lead fields, member by member in stored order. */
const members = (value: unknown): MessageInitShape<typeof StoredMemberSchema>[] =>
  Object.entries((value ?? {}) as Record<string, unknown>).map(([key, v]) => ({
    key,
    value: storedValue(v),
  }));

/** A jsonb object of strings (click ids, ad cookies). */
const strings = (value: unknown) => (value ?? {}) as Record<string, string>;

const toEvent = (r: Row): EventRowInit => ({
  name: String(r.name),
  eventId: text(r.event_id),
  visitorId: text(r.visitor_id),
  sessionId: text(r.session_id),
  url: text(r.url),
  params: members(r.params),
  value: optional(r.value, (v) => BigInt(v as number)),
  currency: text(r.currency),
  source: source(r),
  attribution: attribution(r),
  receivedAt: receivedAt(r),
});

const toPageView = (r: Row): PageViewRowInit => ({
  visitorId: text(r.visitor_id),
  sessionId: text(r.session_id),
  url: String(r.url),
  title: text(r.title),
  referrer: text(r.referrer),
  attribution: attribution(r),
  clickIds: strings(r.click_ids),
  adCookies: strings(r.ad_cookies),
  screen: text(r.screen),
  viewport: text(r.viewport),
  pixelRatio: optional(r.pixel_ratio, Number),
  language: text(r.language),
  timeZone: text(r.time_zone),
  country: text(r.country),
  device: text(r.device),
  browser: text(r.browser),
  os: text(r.os),
  newVisitor: optional(r.new_visitor, Boolean),
  bot: Boolean(r.bot),
  ip: text(r.ip),
  receivedAt: receivedAt(r),
});

/** A stored lead row as its export message (also the data of a lead.created webhook message). */
export const toLead = (r: Row): LeadRowInit => ({
  id: String(r.id),
  leadId: text(r.lead_id),
  source: source(r),
  form: text(r.form),
  name: text(r.name),
  email: text(r.email),
  phone: text(r.phone),
  message: text(r.message),
  fields: members(r.fields),
  visitorId: text(r.visitor_id),
  sessionId: text(r.session_id),
  url: text(r.url),
  attribution: attribution(r),
  receivedAt: receivedAt(r),
});

interface Shape<R> {
  table: string;
  /**
   * Every described column but the site and the time, which the query reads
   * itself, and the page, which is the URL's and not exported.
   */
  columns: string;
  map: (r: Row) => R;
}

const shape = <R>(table: Table<Columns>, map: (r: Row) => R): Shape<R> => ({
  table: table.name,
  columns: selectList(table, ["site_id", "received_at", "page"]),
  map,
});

const SHAPES: { [K in ExportKind]: Shape<RowOf[K]> } = {
  events: shape(EVENTS, toEvent),
  page_views: shape(PAGE_VIEWS, toPageView),
  leads: shape(LEADS, toLead),
};

export const EXPORT_PAGE = 1000;
export const MAX_EXPORT_PAGE = 10_000;

export interface ExportPage<R> {
  rows: R[];
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
export interface ExportRequest<K extends ExportKind> {
  kind: K;
  siteId: string;
  /** Only records received at or after this time, in ms. */
  sinceMs?: number;
  /** Where the page before ended; empty or unset for the first page. */
  cursor?: string;
  pageSize?: number;
}

export async function exportPage<K extends ExportKind>(
  db: Queryable,
  options: ExportRequest<K>,
): Promise<ExportPage<RowOf[K]>> {
  const { kind, siteId } = options;
  const { table, columns, map }: Shape<RowOf[K]> = SHAPES[kind];
  const since = options.sinceMs === undefined
    ? "-infinity"
    : new Date(options.sinceMs).toISOString();
  const [at, seq] = decodeCursor(options.cursor ?? "");
  const pageSize = Math.min(MAX_EXPORT_PAGE, Math.max(1, options.pageSize || EXPORT_PAGE));
  const rows = await db.query(
    `select received_at::text as cursor_at, seq::text as cursor_seq, received_at,
            ${columns}
       from ${table}
      where site_id = $1 and received_at >= $2::text::timestamptz
        and (received_at, seq) > ($3::text::timestamptz, $4::text::bigint)
      order by received_at, seq
      limit $5`,
    [siteId, since, at, seq, pageSize],
  );
  const last = rows[rows.length - 1];
  return {
    rows: rows.map(map),
    nextCursor: rows.length < pageSize ? "" : `${last.cursor_at}|${last.cursor_seq}`,
  };
}
