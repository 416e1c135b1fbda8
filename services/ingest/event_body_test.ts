import { describe, expect, it } from "vitest";
import { applyEventType, parseEventBody as parseEvent } from "./event_body.ts";
import { RefusedError } from "./body_fields.ts";
import { eventFromJson } from "./test_bodies.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";

const purchase: EventTypeDef = {
  name: "purchase",
  title: "Purchase",
  description: "",
  status: "active",
  params: [{ key: "product", type: "string" }, { key: "quantity", type: "number" }],
  bringsRevenue: true,
  currency: "EUR",
};
const parseEventBody = (body: unknown) => parseEvent(eventFromJson(body));

const signup: EventTypeDef = { ...purchase, name: "signup", bringsRevenue: false, currency: null };

function refusal(body: unknown) {
  try {
    parseEventBody(body);
  } catch (error) {
    if (error instanceof RefusedError) return error.refusal;
    throw error;
  }
  return undefined;
}

describe("parseEventBody", () => {
  it("reads long names", () => {
    expect(parseEventBody({
      name: "purchase",
      event_id: "o-1",
      visitor_id: "v1",
      session_id: "s1",
      params: { product: "beans" },
      value: 1299,
      currency: "USD",
      url: "https://shop.example/thanks?email=a@b.c#x",
    })).toEqual({
      name: "purchase",
      eventId: "o-1",
      visitorId: "v1",
      sessionId: "s1",
      params: { product: "beans" },
      value: 1299,
      currency: "USD",
      url: "https://shop.example/thanks",
    });
  });

  it("reads aliases, the long name winning when both are sent", () => {
    const input = parseEventBody({
      n: "purchase",
      id: "o-2",
      vid: "v",
      sid: "s",
      p: { quantity: 2 },
      val: 5,
      cur: "GBP",
      u: "/x",
      name: "signup",
    });
    expect(input).toMatchObject({
      name: "signup",
      eventId: "o-2",
      visitorId: "v",
      sessionId: "s",
      params: { quantity: 2 },
      value: 5,
      currency: "GBP",
      url: "/x",
    });
    expect(parseEventBody({ n: "a", v: "vv", s: "ss" })).toMatchObject({
      visitorId: "vv",
      sessionId: "ss",
    });
  });

  it("refuses what is not the expected object with invalid_body", () => {
    expect(refusal([])).toEqual({ reason: "invalid_body" });
    expect(refusal(null)).toEqual({ reason: "invalid_body" });
    expect(refusal({})?.reason).toBe("invalid_body");
    expect(refusal({ name: 5 })?.reason).toBe("invalid_body");
    expect(refusal({ name: "a", params: [1] })?.fields).toMatchObject({ field: "params" });
    expect(refusal({ name: "a", value: 1.5 })?.fields).toMatchObject({ field: "value" });
    expect(refusal({ name: "a", val: -1 })?.fields).toMatchObject({ field: "val" });
    expect(refusal({ name: "a", value: 1e12 + 1 })?.reason).toBe("invalid_body");
    expect(refusal({ name: "a", value: "100" })?.reason).toBe("invalid_body");
    expect(refusal({ name: "a", currency: "EURO-1" })?.fields).toMatchObject({
      field: "currency",
    });
    expect(refusal({ name: "a", currency: "ABCDEFGHIJK" })?.reason).toBe("invalid_body");
    expect(refusal({ name: "a", event_id: "x".repeat(129) })?.fields).toMatchObject({
      field: "event_id",
    });
    expect(refusal({ name: "a", event_id: 7 })?.reason).toBe("invalid_body");
  });

  it("accepts the limits themselves", () => {
    expect(parseEventBody({ name: "a", value: 1e12, event_id: "x".repeat(128) })).toMatchObject({
      value: 1e12,
    });
    expect(parseEventBody({ name: "a", value: 0, currency: "ABCDEFGHIJ" }).value).toBe(0);
    expect(parseEventBody({ name: "a".repeat(64) }).name).toHaveLength(64);
  });

  it("refuses a malformed name with invalid_event_name", () => {
    for (const name of ["", "1abc", "_a", "a-b", "a b", "ä", "a".repeat(65)]) {
      expect(refusal({ name })).toEqual({ reason: "invalid_event_name" });
    }
  });
});

describe("applyEventType", () => {
  it("keeps value and currency for revenue events, the type's currency by default", () => {
    const input = parseEventBody({ name: "purchase", value: 1299, p: { quantity: 1.23456 } });
    expect(applyEventType(input, purchase)).toEqual({
      params: { quantity: 1.2346 },
      value: 1299,
      currency: "EUR",
    });
    const usd = parseEventBody({ name: "purchase", value: 5, currency: "USD" });
    expect(applyEventType(usd, purchase).currency).toBe("USD");
  });

  it("stores neither value nor currency for other events", () => {
    const input = parseEventBody({ name: "signup", value: 1299, currency: "USD" });
    expect(applyEventType(input, signup)).toMatchObject({ value: null, currency: null });
  });

  it("refuses an unknown or archived type with unknown_event naming it", () => {
    expect.assertions(2);
    const input = parseEventBody({ name: "nope" });
    expect(() => applyEventType(input, undefined)).toThrow(RefusedError);
    try {
      applyEventType(input, { ...signup, status: "archived" });
    } catch (error) {
      expect((error as RefusedError).refusal).toEqual({
        reason: "unknown_event",
        fields: { name: "nope" },
      });
    }
  });
});
