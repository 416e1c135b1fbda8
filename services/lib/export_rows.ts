/**
 * The typed rows of ingest-service's exports as the JSON objects `admin
 * events|pageviews|leads export` prints, one per line: the export's field
 * names and order (docs/operations.md), unknown values as null.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Attribution,
  type EventRow,
  type LeadRow,
  type PageViewRow,
  Source,
  type StoredMember,
} from "./gen/crm/ingest/v1/ingest_pb.ts";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

const orNull = <T>(value: T | undefined): T | null => value ?? null;

const iso = (value: Timestamp | undefined) => value ? timestampDate(value).toISOString() : null;

const sourceName = (source: Source) => source === Source.BROWSER ? "browser" : "server";

const utm = (a: Attribution | undefined) => ({
  utmSource: orNull(a?.utmSource),
  utmMedium: orNull(a?.utmMedium),
  utmCampaign: orNull(a?.utmCampaign),
  utmTerm: orNull(a?.utmTerm),
  utmContent: orNull(a?.utmContent),
});

/** Where the row's visit came from, and when the row was received: the last fields of an event or lead. */
const visitAndTime = (a: Attribution | undefined, receivedAt: Timestamp | undefined) => ({
  channel: orNull(a?.channel),
  ...utm(a),
  adLink: orNull(a?.adLink),
  receivedAt: iso(receivedAt),
});

/** Parameters or lead fields as one object, in stored order. */
const object = (members: readonly StoredMember[]) =>
  Object.fromEntries(members.map((m) => [m.key, m.value?.kind.value ?? null]));

export function eventJson(row: EventRow): Record<string, unknown> {
  return {
    name: row.name,
    eventId: orNull(row.eventId),
    visitorId: orNull(row.visitorId),
    sessionId: orNull(row.sessionId),
    url: orNull(row.url),
    params: object(row.params),
    value: row.value === undefined ? null : Number(row.value),
    currency: orNull(row.currency),
    source: sourceName(row.source),
    ...visitAndTime(row.attribution, row.receivedAt),
  };
}

export function pageViewJson(row: PageViewRow): Record<string, unknown> {
  return {
    visitorId: orNull(row.visitorId),
    sessionId: orNull(row.sessionId),
    url: row.url,
    title: orNull(row.title),
    referrer: orNull(row.referrer),
    ...utm(row.attribution),
    clickIds: row.clickIds,
    adLink: orNull(row.attribution?.adLink),
    adCookies: row.adCookies,
    screen: orNull(row.screen),
    viewport: orNull(row.viewport),
    pixelRatio: orNull(row.pixelRatio),
    language: orNull(row.language),
    timeZone: orNull(row.timeZone),
    country: orNull(row.country),
    device: orNull(row.device),
    browser: orNull(row.browser),
    os: orNull(row.os),
    channel: orNull(row.attribution?.channel),
    newVisitor: orNull(row.newVisitor),
    bot: row.bot,
    ip: orNull(row.ip),
    receivedAt: iso(row.receivedAt),
  };
}

export function leadJson(row: LeadRow): Record<string, unknown> {
  return {
    id: row.id,
    leadId: orNull(row.leadId),
    source: sourceName(row.source),
    form: orNull(row.form),
    name: orNull(row.name),
    email: orNull(row.email),
    phone: orNull(row.phone),
    message: orNull(row.message),
    fields: object(row.fields),
    visitorId: orNull(row.visitorId),
    sessionId: orNull(row.sessionId),
    url: orNull(row.url),
    ...visitAndTime(row.attribution, row.receivedAt),
  };
}
