/**
 * `history import`: page views and events in the exports' own shape (one
 * object a line, with "kind": "pageview" or "event"), checked by the live
 * routes' rules and stored through the writer with their time and stored
 * fields as given. A line that breaks a rule refuses the whole file, named
 * by its number; each line's idempotency key (an event's eventId, else the
 * line's own hash) makes importing the same file again store nothing twice.
 */
import { createHash } from "node:crypto";
import type { Database } from "../lib/db/mod.ts";
import { CURRENCY, EVENT_NAME } from "../lib/formats.ts";
import { writeGroup } from "./writer.ts";
import { isJsonObject } from "../lib/json.ts";
import { cleanId, invalidBody, MAX_ID, MAX_URL, RefusedError } from "./body_fields.ts";
import { MAX_VALUE } from "./event_body.ts";
import type { TypesOfSite } from "./event_types.ts";
import { normalizeParams } from "./params.ts";
import type { Attribution, WriteItem } from "./rows.ts";
import { textOrNull } from "./text.ts";
import { cleanUrl } from "./url_clean.ts";
import { ATTRIBUTION_COLUMNS } from "./tables.ts";
import type { Partitions } from "./partitions.ts";
import { type LeadInput, leadInputOf, leadRow, type SentLead } from "./lead_body.ts";

/** A line that breaks a rule: its number in the file and what is wrong. */
export class HistoryLineError extends Error {
  override name = "HistoryLineError";
  constructor(readonly line: number, readonly problem: string) {
    super(`line ${line}: ${problem}`);
  }
}

/** An imported record: what the writer stores, and the key that makes it stored once. */
export interface HistoryRecord {
  item: WriteItem;
  /** The idempotency key of a record without an eventId: the hash of its line. */
  importId: string | null;
}

const SIZE = /^\d{1,6}x\d{1,6}$/;
const MAX_TEXT = 500;

type Fields = Record<string, unknown>;

/** The readers of one line: each field checked for its type, named in the refusal. */
function reader(fields: Fields, line: number) {
  const fail = (field: string, problem: string): never => {
    throw new HistoryLineError(line, `${field} ${problem}`);
  };
  const text = (field: string, max = MAX_TEXT): string | null => {
    const value = fields[field];
    if (value === undefined || value === null) return null;
    if (typeof value !== "string") return fail(field, "must be a string or null");
    if (value.length > max) return fail(field, `must have at most ${max} characters`);
    return textOrNull(value, max);
  };
  return {
    fail,
    text,
    id(field: string): string | null {
      const value = text(field, MAX_ID);
      if (value === null) return null;
      return cleanId(value) ?? fail(field, `must have 1 to ${MAX_ID} characters`);
    },
    url(field: string, required = false): string | null {
      const value = text(field, MAX_URL * 2);
      if (value === null) return required ? fail(field, "is required, a URL") : null;
      const cleaned = cleanUrl(value);
      return cleaned === null ? fail(field, "must be a URL") : cleaned.slice(0, MAX_URL);
    },
    size(field: string): string | null {
      const value = text(field);
      if (value !== null && !SIZE.test(value)) fail(field, 'must be "WIDTHxHEIGHT"');
      return value;
    },
    number(field: string): number | null {
      const value = fields[field];
      if (value === undefined || value === null) return null;
      return typeof value === "number" && Number.isFinite(value)
        ? value
        : fail(field, "must be a number or null");
    },
    flag(field: string): boolean | null {
      const value = fields[field];
      if (value === undefined || value === null) return null;
      return typeof value === "boolean" ? value : fail(field, "must be true, false or null");
    },
    texts(field: string): Record<string, string> {
      const value = fields[field];
      if (value === undefined || value === null) return {};
      if (!isJsonObject(value) || Object.values(value).some((v) => typeof v !== "string")) {
        return fail(field, "must be an object of strings");
      }
      return value as Record<string, string>;
    },
  };
}

/** When the record was received: an ISO time, not after `nowMs`. */
function receivedAt(read: ReturnType<typeof reader>, nowMs: number): string {
  const value = read.text("receivedAt", 64);
  const ms = value === null ? NaN : Date.parse(value);
  if (value === null || !/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
    return read.fail("receivedAt", "is required, an ISO 8601 time");
  }
  if (ms > nowMs) return read.fail("receivedAt", "is in the future");
  return new Date(ms).toISOString();
}

function attributionOf(read: ReturnType<typeof reader>): Attribution {
  const names: Record<string, string> = {
    channel: "channel",
    utm_source: "utmSource",
    utm_medium: "utmMedium",
    utm_campaign: "utmCampaign",
    utm_term: "utmTerm",
    utm_content: "utmContent",
    ad_link: "adLink",
  };
  const out = { click_ids: read.texts("clickIds") } as Attribution;
  for (const column of ATTRIBUTION_COLUMNS) {
    (out as Record<string, unknown>)[column] = read.text(names[column]);
  }
  return out;
}

/** The site a file is imported into: its id, declared event types, and now. */
export interface HistoryTarget {
  siteId: string;
  types: TypesOfSite;
  nowMs: number;
}

/** One line of a file (its number from 1), checked; throws HistoryLineError. */
export function parseHistoryLine(
  text: string,
  line: number,
  target: HistoryTarget,
): HistoryRecord {
  let fields: unknown;
  try {
    fields = JSON.parse(text);
  } catch {
    throw new HistoryLineError(line, "is not JSON");
  }
  if (!isJsonObject(fields)) throw new HistoryLineError(line, "must be a JSON object");
  const read = reader(fields as Fields, line);
  const kind = (fields as Fields).kind;
  const at = receivedAt(read, target.nowMs);
  if (kind === "pageview") {
    const pixelRatio = read.number("pixelRatio");
    const item: WriteItem = {
      kind: "view",
      row: {
        site_id: target.siteId,
        received_at: at,
        visitor_id: read.id("visitorId"),
        session_id: read.id("sessionId"),
        url: read.url("url", true)!,
        title: read.text("title"),
        referrer: read.url("referrer"),
        attribution: attributionOf(read),
        ad_cookies: read.texts("adCookies"),
        screen: read.size("screen"),
        viewport: read.size("viewport"),
        pixel_ratio: pixelRatio,
        language: read.text("language", 35),
        time_zone: read.text("timeZone", 64),
        country: read.text("country", 8),
        device: read.text("device", 64),
        browser: read.text("browser", 64),
        os: read.text("os", 64),
        bot: read.flag("bot") ?? false,
        ip: read.text("ip", 64),
      },
      given: { newVisitor: read.flag("newVisitor") },
    };
    return { item, importId: lineHash(text) };
  }
  if (kind === "lead") return leadRecord(fields as Fields, text, { read, at, target });
  if (kind !== "event") return read.fail("kind", 'must be "pageview", "event" or "lead"');
  const name = read.text("name", 64);
  if (name === null || !EVENT_NAME.test(name)) return read.fail("name", "must be an event name");
  const type = target.types.get(name);
  if (!type) return read.fail("name", `"${name}" is not declared by the site's event types`);
  const params = (fields as Fields).params ?? {};
  if (!isJsonObject(params)) return read.fail("params", "must be an object");
  const value = read.number("value");
  if (value !== null && !(Number.isInteger(value) && value >= 0 && value <= MAX_VALUE)) {
    read.fail("value", "must be an integer from 0 to 10^12 (minor units)");
  }
  const currency = read.text("currency", 10);
  if (currency !== null && !CURRENCY.test(currency)) {
    read.fail("currency", "must be 1 to 10 Latin letters or digits");
  }
  const source = sourceOf(fields as Fields, read);
  const eventId = read.id("eventId");
  const item: WriteItem = {
    kind: "event",
    row: {
      site_id: target.siteId,
      received_at: at,
      name,
      event_id: eventId,
      visitor_id: read.id("visitorId"),
      session_id: read.id("sessionId"),
      url: read.url("url"),
      params: normalizeParams(type.params, params as Record<string, unknown>),
      value: type.bringsRevenue ? value : null,
      currency: type.bringsRevenue ? currency ?? (value === null ? null : type.currency) : null,
      source,
      bot: read.flag("bot"),
    },
    attribution: attributionOf(read),
  };
  return { item, importId: eventId === null ? lineHash(text) : null };
}

/** Whether a record came from a browser or a server (a server, when not said). */
function sourceOf(fields: Fields, read: ReturnType<typeof reader>): "browser" | "server" {
  const source = fields.source ?? "server";
  if (source !== "browser" && source !== "server") {
    return read.fail("source", 'must be "browser" or "server"');
  }
  return source;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A lead's members as a line holds them, under the export's names. */
function sentLead(fields: Fields): SentLead {
  return {
    text(member) {
      const value = fields[member];
      if (value === undefined || value === null) return null;
      if (typeof value !== "string") throw invalidBody(member, "must be a string");
      return value;
    },
    fields() {
      const value = fields.fields;
      if (value === undefined || value === null) return null;
      if (!isJsonObject(value)) throw invalidBody("fields", "must be an object");
      return Object.entries(value);
    },
    key: (member) => member,
  };
}

/**
 * A lead line: checked by the lead route's own rules (lead_body.ts), kept
 * with its id, time and attribution as given. Its id (a restore keeps it),
 * else its lead id, makes it stored once, as the writer stores a lead once
 * by either; a lead with neither (from another tool) gets a new id and is
 * stored once by its line's hash.
 */
function leadRecord(
  fields: Fields,
  text: string,
  { read, at, target }: { read: ReturnType<typeof reader>; at: string; target: HistoryTarget },
): HistoryRecord {
  let lead: LeadInput;
  try {
    lead = leadInputOf(sentLead(fields));
  } catch (error) {
    if (!(error instanceof RefusedError) || error.refusal.reason !== "invalid_body") throw error;
    const { field, problem } = error.refusal.fields!;
    return read.fail(field, problem);
  }
  const id = read.text("id", 64);
  if (id !== null && !UUID.test(id)) read.fail("id", "must be a UUID");
  const item: WriteItem = {
    kind: "lead",
    row: leadRow(lead, {
      id: id?.toLowerCase() ?? crypto.randomUUID(),
      siteId: target.siteId,
      receivedAt: at,
      source: sourceOf(fields, read),
    }),
    attribution: attributionOf(read),
  };
  return { item, importId: id === null && lead.leadId === null ? lineHash(text) : null };
}

/**
 * A line's idempotency key: the SHA-256 of its text, without the spaces
 * around it. Node's hash, synchronous, takes about 2 µs a line where
 * crypto.subtle's promise took 23.
 */
function lineHash(text: string): string {
  return createHash("sha256").update(text.trim()).digest("hex");
}

/** What storing records did: page views, events and leads stored, records already stored. */
export interface HistoryCounts {
  pageviews: number;
  events: number;
  leads: number;
  skipped: number;
}

/** How many records of each kind. */
export function countsOf(records: readonly HistoryRecord[], skipped = 0): HistoryCounts {
  const count = (kind: WriteItem["kind"]) => records.filter((r) => r.item.kind === kind).length;
  return { pageviews: count("view"), events: count("event"), leads: count("lead"), skipped };
}

/**
 * Stores records in one transaction through the writer (visits kept as for
 * live rows), each at most once: a record with an importId claims it, an
 * event its id, a lead its id and lead id, and those already claimed are
 * skipped. No lead.created goes out: a restored or moved lead was told
 * when it came. The partitions of every month the page views and events
 * fall in are made first, checked in the catalogue (history may be older
 * than what retention left).
 */
export async function storeHistory(
  db: Database,
  records: HistoryRecord[],
  partitions: Partitions,
): Promise<HistoryCounts> {
  const partitioned = records.filter((r) => r.item.kind !== "lead");
  await partitions.ensure(partitioned.map((r) => Date.parse(r.item.row.received_at)), {
    verify: true,
  });
  return await db.transaction(async (tx) => {
    const keys = records.filter((r) => r.importId !== null);
    const won = new Set<string>();
    if (keys.length > 0) {
      const rows = await tx.query<{ import_id: string }>(
        `insert into ingest.imported_rows (site_id, import_id)
         select $1, id from json_array_elements_text($2::json) id order by 2
         on conflict do nothing returning import_id`,
        [records[0].item.row.site_id, JSON.stringify(keys.map((r) => r.importId))],
      );
      for (const r of rows) won.add(r.import_id);
    }
    const fresh = records.filter((r) => r.importId === null || won.delete(r.importId));
    const results = await writeGroup(tx, fresh.map((r) => r.item), {
      endsTransaction: true,
      tellLeads: false,
    });
    const stored = fresh.filter((_, i) => !results[i].duplicate);
    return countsOf(stored, records.length - stored.length);
  });
}
