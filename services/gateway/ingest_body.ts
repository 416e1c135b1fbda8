/**
 * The marketing routes' JSON bodies mapped once to the typed ingest contract
 * (crm.ingest.v1 PageView, Event, Lead): each field's long name and aliases
 * resolved, every value carried with its JSON type. No rule is applied here:
 * whether a value of another type means "absent" or a refusal, and which
 * refusal comes first, stays ingest-service's to decide. (A page view's
 * members of another type are left out, which is all ingest-service makes of
 * them: a beacon cannot be told what was wrong.)
 */
import { create } from "@bufbuild/protobuf";
import { NullValue } from "@bufbuild/protobuf/wkt";
import {
  type Event,
  EventSchema,
  type IngestItem,
  JsonType,
  type JsonValue,
  JsonValueSchema,
  type Lead,
  LeadSchema,
  type Members,
  MembersSchema,
  type PageView,
  PageViewSchema,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { isJsonObject, type JsonObject } from "../lib/json.ts";

/** The names each field is read from, in order of precedence: the long name, then its aliases. */
export const EVENT_KEYS = {
  name: ["name", "n"],
  eventId: ["event_id", "id"],
  visitorId: ["visitor_id", "vid", "v"],
  sessionId: ["session_id", "sid", "s"],
  params: ["params", "p"],
  value: ["value", "val"],
  currency: ["currency", "cur"],
  url: ["url", "u"],
} as const;

export const LEAD_KEYS = {
  leadId: ["lead_id", "id"],
  visitorId: EVENT_KEYS.visitorId,
  sessionId: EVENT_KEYS.sessionId,
  url: EVENT_KEYS.url,
} as const;

export type IngestBody = IngestItem["body"];
export type BodyKind = NonNullable<IngestBody["case"]>;

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return JsonType.NULL;
  if (Array.isArray(value)) return JsonType.ARRAY;
  switch (typeof value) {
    case "boolean":
      return JsonType.BOOLEAN;
    case "number":
      return JsonType.NUMBER;
    case "string":
      return JsonType.STRING;
    default:
      return JsonType.OBJECT;
  }
}

/** A member's value; objects and arrays as their JSON text, which keeps every character sent. */
export function jsonValueOf(value: unknown): JsonValue {
  const kind: JsonValue["kind"] = value === null
    ? { case: "nullValue", value: NullValue.NULL_VALUE }
    : typeof value === "boolean"
    ? { case: "boolValue", value }
    : typeof value === "number"
    ? { case: "numberValue", value }
    : typeof value === "string"
    ? { case: "stringValue", value }
    : { case: "jsonText", value: JSON.stringify(value) };
  return create(JsonValueSchema, { kind });
}

/** An object's members, in the order of the object. */
export function membersOf(object: JsonObject): Members {
  return create(MembersSchema, {
    members: Object.entries(object).map(([key, value]) => ({ key, value: jsonValueOf(value) })),
  });
}

/** The first of the names the body holds, with its value. */
function pick(body: JsonObject, names: readonly string[]) {
  for (const key of names) {
    if (Object.hasOwn(body, key) && body[key] !== undefined) return { key, value: body[key] };
  }
  return undefined;
}

const text = (value: unknown) => typeof value === "string" ? value : undefined;
const number = (value: unknown) => typeof value === "number" ? value : undefined;
const members = (value: unknown) => isJsonObject(value) ? membersOf(value) : undefined;

/**
 * A field as sent: the key that carried it and its value as `kind` when
 * `read` takes it, else the JSON type that came instead.
 */
function sent<K extends string, T>(
  body: JsonObject,
  names: readonly string[],
  kind: K,
  read: (value: unknown) => T | undefined,
) {
  const found = pick(body, names);
  if (!found) return undefined;
  const value = read(found.value);
  return {
    key: found.key,
    value: value === undefined
      ? { case: "other" as const, value: jsonTypeOf(found.value) }
      : { case: kind, value },
  };
}

const textField = (body: JsonObject, names: readonly string[]) =>
  sent(body, names, "text" as const, text);
const numberField = (body: JsonObject, names: readonly string[]) =>
  sent(body, names, "number" as const, number);
const objectField = (body: JsonObject, names: readonly string[]) =>
  sent(body, names, "members" as const, members);

/** The ad cookies (`c`): its members with a string value. */
function cookies(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isJsonObject(value)) return out;
  for (const [name, cookie] of Object.entries(value)) {
    if (typeof cookie === "string") out[name] = cookie;
  }
  return out;
}

/**
 * POST /marketing/view. With Global Privacy Control (the browser's Sec-GPC
 * header) the ad cookies are left out, even from a page whose script did
 * not see the signal.
 */
export function pageViewOf(body: JsonObject, options: { gpc: boolean }): PageView {
  return create(PageViewSchema, {
    url: text(body.u),
    visitorId: text(body.v),
    sessionId: text(body.s),
    title: text(body.t),
    referrer: text(body.r),
    screenWidth: number(body.sw),
    screenHeight: number(body.sh),
    viewportWidth: number(body.vw),
    viewportHeight: number(body.vh),
    pixelRatio: number(body.pr),
    language: text(body.l),
    timeZone: text(body.tz),
    adCookies: options.gpc ? {} : cookies(body.c),
    landingUrl: text(body.a),
  });
}

/** POST /marketing/event and /marketing/act. */
export function eventOf(body: JsonObject): Event {
  return create(EventSchema, {
    name: textField(body, EVENT_KEYS.name),
    eventId: textField(body, EVENT_KEYS.eventId),
    visitorId: textField(body, EVENT_KEYS.visitorId),
    sessionId: textField(body, EVENT_KEYS.sessionId),
    params: objectField(body, EVENT_KEYS.params),
    value: numberField(body, EVENT_KEYS.value),
    currency: textField(body, EVENT_KEYS.currency),
    url: textField(body, EVENT_KEYS.url),
  });
}

/** POST /marketing/lead. */
export function leadOf(body: JsonObject): Lead {
  return create(LeadSchema, {
    leadId: textField(body, LEAD_KEYS.leadId),
    form: textField(body, ["form"]),
    name: textField(body, ["name"]),
    email: textField(body, ["email"]),
    phone: textField(body, ["phone"]),
    message: textField(body, ["message"]),
    fields: objectField(body, ["fields"]),
    visitorId: textField(body, LEAD_KEYS.visitorId),
    sessionId: textField(body, LEAD_KEYS.sessionId),
    url: textField(body, LEAD_KEYS.url),
  });
}

/** The typed body of a route's kind. */
export function ingestBodyOf(
  kind: BodyKind,
  body: JsonObject,
  options: { gpc: boolean },
): IngestBody {
  switch (kind) {
    case "pageView":
      return { case: "pageView", value: pageViewOf(body, options) };
    case "event":
      return { case: "event", value: eventOf(body) };
    case "lead":
      return { case: "lead", value: leadOf(body) };
  }
}
