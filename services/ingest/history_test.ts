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

  it("refuses a line that breaks a rule, naming the field", () => {
    expect(problemOf("{nope")).toMatch(/not JSON/);
    expect(problemOf("[1]")).toMatch(/JSON object/);
    expect(problemOf(line({ ...view, kind: "lead" }))).toMatch(/^kind/);
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
