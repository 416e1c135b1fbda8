import { describe, expect, it } from "vitest";
import { parsePageViewBody as parsePageView } from "./page_view_body.ts";
import { parseLeadBody as parseLead } from "./lead_body.ts";
import { RefusedError } from "./body_fields.ts";
import { leadFromJson, pageViewFromJson } from "./test_bodies.ts";

const parsePageViewBody = (body: unknown) => parsePageView(pageViewFromJson(body));
const parseLeadBody = (body: unknown) => parseLead(leadFromJson(body));

function refused(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (error instanceof RefusedError) return error.refusal;
    throw error;
  }
  throw new Error("not refused");
}

describe("parsePageViewBody", () => {
  it("reads the widget's fields and cleans the URLs", () => {
    const view = parsePageViewBody({
      v: "vid-1",
      s: "sid-1",
      u: "https://shop.example/p?utm_source=x&token=secret#frag",
      t: "Product",
      r: "https://www.google.com/search?q=x&email=a@b.c",
      sw: 1920,
      sh: 1080,
      vw: 1280,
      vh: 720,
      pr: 2,
      l: "de-DE",
      tz: "Europe/Berlin",
      c: { _ga: "GA1.1.1", _gcl_aw: "GCL.1", _ym_uid: "1", _fbp: "fb.1", _fbc: "fb.2", other: "x" },
      a: "https://shop.example/?utm_source=y",
    });
    expect(view).toEqual({
      visitorId: "vid-1",
      sessionId: "sid-1",
      rawUrl: "https://shop.example/p?utm_source=x&token=secret#frag",
      url: "https://shop.example/p?utm_source=x",
      title: "Product",
      rawLanding: "https://shop.example/?utm_source=y",
      rawReferrer: "https://www.google.com/search?q=x&email=a@b.c",
      referrer: "https://www.google.com/search?q=x",
      screen: "1920x1080",
      viewport: "1280x720",
      pixelRatio: 2,
      language: "de-DE",
      timeZone: "Europe/Berlin",
      adCookies: { _ga: "GA1.1.1", _gcl_aw: "GCL.1", _ym_uid: "1", _fbp: "fb.1", _fbc: "fb.2" },
    });
  });

  it("stores wrong-typed optional fields as unknown", () => {
    const view = parsePageViewBody({
      u: "https://a.example/",
      v: 5,
      sw: "big",
      sh: 1,
      pr: -1,
      r: "",
      c: [],
      a: 7,
    });
    expect(view).toMatchObject({
      visitorId: null,
      rawLanding: null,
      screen: null,
      pixelRatio: null,
      referrer: null,
      rawReferrer: null,
      adCookies: {},
    });
  });

  it("refuses a body without a page URL", () => {
    expect(refused(() => parsePageViewBody({ t: "x" })).reason).toBe("invalid_body");
    expect(refused(() => parsePageViewBody("x")).reason).toBe("invalid_body");
  });
});

describe("parseLeadBody", () => {
  it("reads a lead with its attribution ids", () => {
    expect(parseLeadBody({
      id: "lead-1",
      form: "contact",
      name: " Ann ",
      email: "ann@example.com",
      fields: { company: "ACME", seats: 5, urgent: true },
      v: "vid",
      sid: "sid",
      u: "https://a.example/contact?email=ann@example.com",
    })).toEqual({
      leadId: "lead-1",
      form: "contact",
      name: "Ann",
      email: "ann@example.com",
      phone: null,
      message: null,
      fields: { company: "ACME", seats: 5, urgent: true },
      visitorId: "vid",
      sessionId: "sid",
      url: "https://a.example/contact",
    });
  });

  it("refuses a lead without contact details, a bad email or bad fields", () => {
    expect(refused(() => parseLeadBody({ form: "x" })).reason).toBe("invalid_body");
    expect(refused(() => parseLeadBody({ email: "not-an-email" })).fields).toMatchObject({
      field: "email",
    });
    expect(refused(() => parseLeadBody({ name: "a", fields: { a: { b: 1 } } })).fields)
      .toMatchObject({ field: "fields" });
    expect(refused(() => parseLeadBody({ name: "x".repeat(201) })).fields).toMatchObject({
      field: "name",
    });
  });
});
