import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { IngestItemSchema, JsonType } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { eventOf, ingestBodyOf, jsonValueOf, leadOf, pageViewOf } from "./ingest_body.ts";

/** The item as ingest-service decodes it from the wire. */
function overTheWire(body: ReturnType<typeof ingestBodyOf>) {
  const item = create(IngestItemSchema, { siteId: "s", body });
  return fromBinary(IngestItemSchema, toBinary(IngestItemSchema, item)).body;
}

describe("eventOf", () => {
  it("reads the long name before its aliases and keeps the key the body used", () => {
    const event = eventOf({ n: "alias", name: "long", id: "e-1", vid: "v", s: "s", u: "/x" });
    expect(event.name).toMatchObject({ key: "name", value: { case: "text", value: "long" } });
    expect(event.eventId).toMatchObject({ key: "id", value: { case: "text", value: "e-1" } });
    expect(event.visitorId?.key).toBe("vid");
    expect(event.sessionId?.key).toBe("s");
    expect(event.url?.key).toBe("u");
    expect(event.params).toBeUndefined();
    expect(event.currency).toBeUndefined();
  });

  it("carries a value of another JSON type as its type, null included, for ingest to judge", () => {
    const event = eventOf({ name: 5, params: null, p: { a: 1 }, val: "100", cur: [], url: {} });
    expect(event.name?.value).toEqual({ case: "other", value: JsonType.NUMBER });
    // A long name sent as null still wins over its alias: the rule is ingest-service's.
    expect(event.params).toMatchObject({ key: "params", value: { value: JsonType.NULL } });
    expect(event.value).toMatchObject({ key: "val", value: { value: JsonType.STRING } });
    expect(event.currency?.value).toEqual({ case: "other", value: JsonType.ARRAY });
    expect(event.url?.value).toEqual({ case: "other", value: JsonType.OBJECT });
  });

  it("keeps the parameters in the order sent, objects and arrays as their JSON text", () => {
    const event = eventOf({
      name: "a",
      params: { z: "1", a: 2.5, t: true, o: { x: "\ud800" }, n: null },
    });
    expect(event.params?.value.case).toBe("members");
    const members = event.params?.value.case === "members" ? event.params.value.value.members : [];
    expect(members.map((m) => [m.key, m.value?.kind.case, m.value?.kind.value])).toEqual([
      ["z", "stringValue", "1"],
      ["a", "numberValue", 2.5],
      ["t", "boolValue", true],
      ["o", "jsonText", '{"x":"\\ud800"}'],
      ["n", "nullValue", 0],
    ]);
  });

  it("arrives as sent, a lone surrogate in an object's text included", () => {
    const body = ingestBodyOf("event", { name: "a", p: { o: { x: "\ud800" } }, value: 1e400 }, {
      gpc: false,
    });
    const decoded = overTheWire(body);
    expect(decoded.case).toBe("event");
    const event = decoded.case === "event" ? decoded.value : undefined;
    expect(event?.value?.value).toEqual({ case: "number", value: Infinity });
    expect(event?.params?.value.case === "members" && event.params.value.value.members[0].value)
      .toEqual(jsonValueOf({ x: "\ud800" }));
  });
});

describe("pageViewOf", () => {
  it("maps the widget's short keys and leaves out members of another type", () => {
    const view = pageViewOf({
      u: "https://a.example/",
      v: 7,
      s: "sid",
      t: null,
      sw: 1920,
      sh: "1080",
      pr: 2,
      c: { _ga: "GA1", _fbp: 5, other: "x" },
      a: "https://a.example/?utm_source=x",
    }, { gpc: false });
    expect(view).toMatchObject({
      url: "https://a.example/",
      sessionId: "sid",
      screenWidth: 1920,
      pixelRatio: 2,
      adCookies: { _ga: "GA1", other: "x" },
      landingUrl: "https://a.example/?utm_source=x",
    });
    expect(view.visitorId).toBeUndefined();
    expect(view.title).toBeUndefined();
    expect(view.screenHeight).toBeUndefined();
  });

  it("drops the ad cookies under Global Privacy Control", () => {
    expect(pageViewOf({ u: "https://a.example/", c: { _ga: "GA1" } }, { gpc: true }).adCookies)
      .toEqual({});
  });
});

describe("leadOf", () => {
  it("reads lead_id, then id, and the contact fields by their own names", () => {
    const lead = leadOf({ id: "l-1", email: "a@b.c", name: 3, fields: [], sid: "s" });
    expect(lead.leadId).toMatchObject({ key: "id", value: { case: "text", value: "l-1" } });
    expect(lead.email).toMatchObject({ key: "email", value: { case: "text" } });
    expect(lead.name?.value).toEqual({ case: "other", value: JsonType.NUMBER });
    expect(lead.fields?.value).toEqual({ case: "other", value: JsonType.ARRAY });
    expect(lead.sessionId?.key).toBe("sid");
    expect(lead.phone).toBeUndefined();
  });
});
