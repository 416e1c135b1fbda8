import { describe, expect, it } from "vitest";
import { HistoryLineError, parseHistoryLine } from "./history.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";

const signup: EventTypeDef = {
  name: "signup",
  title: "Sign up",
  description: "",
  status: "active",
  params: [{ key: "plan", type: "string" }, { key: "seats", type: "number" }],
  bringsRevenue: true,
  currency: "EUR",
};
const target = {
  siteId: "to",
  types: new Map([["signup", signup]]),
  nowMs: Date.parse("2026-11-26T12:00:00Z"),
};
const view = {
  kind: "pageview",
  visitorId: "v1",
  sessionId: "s1",
  url: "https://to.example/a?utm_source=x&email=a@b.c",
  referrer: "https://www.google.com/",
  utmSource: "x",
  channel: "paid",
  screen: "390x844",
  country: "DE",
  newVisitor: false,
  bot: false,
  receivedAt: "2026-11-01T10:00:00.000Z",
};
const event = {
  kind: "event",
  name: "signup",
  eventId: null,
  params: { plan: "pro", seats: 2, colour: "red" },
  value: 1500,
  currency: null,
  source: "server",
  channel: "email",
  receivedAt: "2026-11-01T10:01:00Z",
};
const lead = {
  kind: "lead",
  id: "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
  leadId: "form-7",
  source: "browser",
  form: "contact",
  name: " Ann ",
  email: "ann@example.com",
  phone: null,
  message: "Hello",
  fields: { plan: "pro", seats: 3, ok: true },
  visitorId: "v1",
  sessionId: "s1",
  url: "https://to.example/contact?email=a@b.c",
  channel: "email",
  utmSource: "news",
  utmMedium: null,
  utmCampaign: null,
  utmTerm: null,
  utmContent: null,
  adLink: null,
  receivedAt: "2026-11-01T10:02:00Z",
};

const line = (fields: Record<string, unknown>) => JSON.stringify(fields);
function problemOf(text: string): string {
  try {
    parseHistoryLine(text, 7, target);
  } catch (error) {
    if (error instanceof HistoryLineError) {
      expect(error.line).toBe(7);
      return error.problem;
    }
    throw error;
  }
  throw new Error("the line was accepted");
}

describe("parseHistoryLine", () => {
  it("keeps a page view's fields as given, its URL scrubbed as the live routes do", () => {
    const { item, importId } = parseHistoryLine(line(view), 1, target);
    expect(item.kind).toBe("view");
    if (item.kind !== "view") return;
    expect(item.row).toMatchObject({
      site_id: "to",
      visitor_id: "v1",
      session_id: "s1",
      screen: "390x844",
      country: "DE",
      received_at: "2026-11-01T10:00:00.000Z",
    });
    expect(item.row.url).not.toContain("a@b.c");
    expect(item.row.attribution).toMatchObject({ channel: "paid", utm_source: "x" });
    expect(item.given).toEqual({ newVisitor: false });
    expect(importId).toMatch(/^[0-9a-f]{64}$/);
    // The same line keys the same; another line another.
    expect((parseHistoryLine(` ${line(view)} `, 2, target)).importId).toBe(importId);
    expect((parseHistoryLine(line({ ...view, title: "x" }), 2, target)).importId).not.toBe(
      importId,
    );
  });

  it("keeps an event's declared parameters and its type's currency", () => {
    const { item, importId } = parseHistoryLine(line(event), 1, target);
    expect(item.kind).toBe("event");
    if (item.kind !== "event") return;
    expect(item.row).toMatchObject({
      name: "signup",
      params: { plan: "pro", seats: 2 },
      value: 1500,
      currency: "EUR",
      source: "server",
    });
    expect(item.attribution).toMatchObject({ channel: "email" });
    expect(importId).not.toBeNull();
    const withId = parseHistoryLine(line({ ...event, eventId: "e-1" }), 1, target);
    expect(withId.importId).toBeNull(); // its id makes it stored once
  });

  it("keeps a lead's fields and id as given, checked and cleaned as the lead route does", () => {
    const { item, importId } = parseHistoryLine(line(lead), 1, target);
    expect(item.kind).toBe("lead");
    if (item.kind !== "lead") return;
    expect(item.row).toMatchObject({
      id: lead.id,
      site_id: "to",
      lead_id: "form-7",
      source: "browser",
      form: "contact",
      name: "Ann",
      email: "ann@example.com",
      phone: null,
      message: "Hello",
      fields: { plan: "pro", seats: 3, ok: true },
      visitor_id: "v1",
      session_id: "s1",
      received_at: "2026-11-01T10:02:00.000Z",
    });
    expect(item.row.url).not.toContain("a@b.c");
    expect(item.attribution).toMatchObject({ channel: "email", utm_source: "news" });
    // Its id (and lead id) make it stored once.
    expect(importId).toBeNull();
    expect(parseHistoryLine(line({ ...lead, leadId: null }), 1, target).importId).toBeNull();
    // A lead from another tool, with neither: a new id, stored once by its line's hash.
    const bare = parseHistoryLine(line({ ...lead, id: undefined, leadId: null }), 1, target);
    if (bare.item.kind !== "lead") throw new Error("not a lead");
    expect(bare.item.row.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(bare.item.row.id).not.toBe(lead.id);
    expect(bare.importId).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a lead the lead route would refuse, naming the field", () => {
    const contactless = { ...lead, name: null, email: null, message: null };
    expect(problemOf(line(contactless))).toMatch(/^email a lead needs a name, email, phone/);
    expect(problemOf(line({ ...lead, email: "nope" }))).toMatch(/^email is not an email address/);
    expect(problemOf(line({ ...lead, name: "x".repeat(201) }))).toMatch(/^name must have at most/);
    expect(problemOf(line({ ...lead, phone: 12345 }))).toMatch(/^phone must be a string/);
    expect(problemOf(line({ ...lead, fields: { a: { b: 1 } } }))).toMatch(/^fields value of "a"/);
    expect(problemOf(line({ ...lead, fields: [1] }))).toMatch(/^fields must be an object/);
    expect(problemOf(line({ ...lead, leadId: "x".repeat(200) }))).toMatch(/^leadId must have/);
    expect(problemOf(line({ ...lead, id: "lead-1" }))).toMatch(/^id must be a UUID/);
    expect(problemOf(line({ ...lead, source: "robot" }))).toMatch(/^source/);
    expect(problemOf(line({ ...lead, receivedAt: "2026-12-01T00:00:00Z" }))).toMatch(
      /receivedAt is in the future/,
    );
  });

  it("refuses a line that breaks a rule, naming the field", () => {
    expect(problemOf("{nope")).toMatch(/not JSON/);
    expect(problemOf("[1]")).toMatch(/JSON object/);
    expect(problemOf(line({ ...view, kind: "visit" }))).toMatch(/^kind/);
    expect(problemOf(line({ ...view, receivedAt: "2026-12-01T00:00:00Z" }))).toMatch(
      /receivedAt is in the future/,
    );
    expect(problemOf(line({ ...view, receivedAt: "yesterday" }))).toMatch(/^receivedAt/);
    expect(problemOf(line({ ...view, url: undefined }))).toMatch(/^url is required/);
    expect(problemOf(line({ ...view, url: "javascript:alert(1)" }))).toMatch(
      /^url must be a URL/,
    );
    expect(problemOf(line({ ...view, screen: 390 }))).toMatch(/^screen/);
    expect(problemOf(line({ ...view, bot: "no" }))).toMatch(/^bot/);
    expect(problemOf(line({ ...view, visitorId: "x".repeat(200) }))).toMatch(/^visitorId/);
    expect(problemOf(line({ ...event, name: "checkout" }))).toMatch(/not declared/);
    expect(problemOf(line({ ...event, value: -1 }))).toMatch(/^value/);
    expect(problemOf(line({ ...event, currency: "€" }))).toMatch(/^currency/);
    expect(problemOf(line({ ...event, params: [1] }))).toMatch(/^params/);
    expect(problemOf(line({ ...event, source: "robot" }))).toMatch(/^source/);
  });
});
