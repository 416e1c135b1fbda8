/**
 * A custom event as sent to POST /marketing/event (long names or aliases)
 * or to the browser route /marketing/act (short names), mapped to typed
 * fields by the gateway, checked field by field, then against its declared
 * event type.
 */
import { CURRENCY, EVENT_NAME } from "../lib/formats.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";
import type { Event } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import {
  invalidBody,
  isAbsent,
  optionalBrowserId,
  optionalId,
  optionalUrl,
  plainObject,
  RefusedError,
} from "./body_fields.ts";
import { normalizeParams, type ParamValue } from "./params.ts";

export const MAX_VALUE = 1e12;

export interface EventInput {
  name: string;
  eventId: string | null;
  visitorId: string | null;
  sessionId: string | null;
  /** The parameters as sent. */
  params: Record<string, unknown>;
  value: number | null;
  currency: string | null;
  url: string | null;
}

/** Reads an event; throws RefusedError (invalid_body, invalid_event_name). */
export function parseEventBody(event: Event): EventInput {
  const { name, params, value, currency } = event;
  if (name?.value.case !== "text") throw invalidBody(name?.key ?? "name", "is required, a string");
  if (!EVENT_NAME.test(name.value.value)) throw new RefusedError({ reason: "invalid_event_name" });

  if (!isAbsent(params) && params!.value.case !== "members") {
    throw invalidBody(params!.key, "must be an object");
  }
  if (
    !isAbsent(value) &&
    !(value!.value.case === "number" && Number.isInteger(value!.value.value) &&
      value!.value.value >= 0 && value!.value.value <= MAX_VALUE)
  ) {
    throw invalidBody(value!.key, "must be an integer from 0 to 10^12 (minor units)");
  }
  if (
    !isAbsent(currency) &&
    !(currency!.value.case === "text" && CURRENCY.test(currency!.value.value))
  ) {
    throw invalidBody(currency!.key, "must be 1 to 10 Latin letters or digits");
  }
  return {
    name: name.value.value,
    eventId: optionalId(event.eventId),
    visitorId: optionalBrowserId(event.visitorId),
    sessionId: optionalBrowserId(event.sessionId),
    params: params?.value.case === "members" ? plainObject(params.key, params.value.value) : {},
    value: value?.value.case === "number" ? value.value.value : null,
    currency: currency?.value.case === "text" ? currency.value.value : null,
    url: optionalUrl(event.url),
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
