/**
 * A custom event as sent to POST /marketing/event (long names or aliases)
 * or to the browser route /marketing/act (short names), checked field by
 * field, then against its declared event type.
 */
import { CURRENCY, EVENT_NAME } from "../lib/formats.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";
import {
  type Body,
  invalidBody,
  isObject,
  optionalBrowserId,
  optionalId,
  optionalUrl,
  pick,
  RefusedError,
} from "./body_fields.ts";
import { normalizeParams, type ParamValue } from "./params.ts";

export const MAX_VALUE = 1e12;

export const EVENT_FIELDS = {
  name: ["name", "n"],
  eventId: ["event_id", "id"],
  visitorId: ["visitor_id", "vid", "v"],
  sessionId: ["session_id", "sid", "s"],
  params: ["params", "p"],
  value: ["value", "val"],
  currency: ["currency", "cur"],
  url: ["url", "u"],
} as const;

export interface EventInput {
  name: string;
  eventId: string | null;
  visitorId: string | null;
  sessionId: string | null;
  params: Record<string, unknown>;
  value: number | null;
  currency: string | null;
  url: string | null;
}

/** Reads an event body; throws RefusedError (invalid_body, invalid_event_name). */
export function parseEventBody(body: unknown): EventInput {
  if (!isObject(body)) throw new RefusedError({ reason: "invalid_body" });
  const name = pick(body, EVENT_FIELDS.name);
  if (typeof name.value !== "string") throw invalidBody(name.name, "is required, a string");
  if (!EVENT_NAME.test(name.value)) throw new RefusedError({ reason: "invalid_event_name" });

  const params = pick(body, EVENT_FIELDS.params);
  if (params.value !== undefined && params.value !== null && !isObject(params.value)) {
    throw invalidBody(params.name, "must be an object");
  }
  const value = pick(body, EVENT_FIELDS.value);
  if (
    value.value !== undefined && value.value !== null &&
    !(Number.isInteger(value.value) && (value.value as number) >= 0 &&
      (value.value as number) <= MAX_VALUE)
  ) {
    throw invalidBody(value.name, "must be an integer from 0 to 10^12 (minor units)");
  }
  const currency = pick(body, EVENT_FIELDS.currency);
  if (
    currency.value !== undefined && currency.value !== null &&
    !(typeof currency.value === "string" && CURRENCY.test(currency.value))
  ) {
    throw invalidBody(currency.name, "must be 1 to 10 Latin letters or digits");
  }
  return {
    name: name.value,
    eventId: optionalId(body as Body, EVENT_FIELDS.eventId),
    visitorId: optionalBrowserId(body, EVENT_FIELDS.visitorId),
    sessionId: optionalBrowserId(body, EVENT_FIELDS.sessionId),
    params: (params.value ?? {}) as Record<string, unknown>,
    value: (value.value ?? null) as number | null,
    currency: (currency.value ?? null) as string | null,
    url: optionalUrl(body, EVENT_FIELDS.url),
  };
}

export interface TypedEvent {
  params: Record<string, ParamValue>;
  /** Minor units; null unless the type brings revenue. */
  value: number | null;
  /** The request's currency or the type's; null unless the type brings revenue. */
  currency: string | null;
}

/**
 * Applies the declared type: only declared parameters, converted; value and
 * currency only for revenue events. An archived or unknown type refuses.
 */
export function applyEventType(input: EventInput, type: EventTypeDef | undefined): TypedEvent {
  if (!type || type.status !== "active") {
    throw new RefusedError({ reason: "unknown_event", fields: { name: input.name } });
  }
  const revenue = type.bringsRevenue;
  return {
    params: normalizeParams(type.params, input.params),
    value: revenue ? input.value : null,
    currency: revenue ? input.currency ?? type.currency : null,
  };
}
