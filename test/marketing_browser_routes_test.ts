/**
 * The browser collection routes /marketing/view, /marketing/act and
 * /marketing/lead, on every storage: the site by Origin, 204 without a body,
 * sendBeacon's text/plain, CORS, silent drops, and the enrichment and
 * privacy handling of page views (location, truncated IP, cleaned URLs,
 * device, bot flag, channel, new or returning visitor, ad-link attribution).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  analyticsManifest,
  beacon,
  CHROME,
  exported,
  type Json,
  postEvent,
} from "./helpers/marketing.ts";

const PAGE_VIEW_FIELDS = [
  "visitorId",
  "sessionId",
  "url",
  "title",
  "referrer",
  "utmSource",
  "utmMedium",
  "utmCampaign",
  "utmTerm",
  "utmContent",
  "clickIds",
  "adLink",
  "adCookies",
  "screen",
  "viewport",
  "pixelRatio",
  "language",
  "timeZone",
  "country",
  "device",
  "browser",
  "os",
  "channel",
  "newVisitor",
  "bot",
  "ip",
  "receivedAt",
];

describe.each(SYSTEM_STORAGES)("browser routes on %s", (storage) => {
  let sys: TestSystem;

  beforeAll(async () => {
    // One trusted proxy: the tests choose the client address with X-Forwarded-For.
    sys = await startTestSystem({
      storage,
      seed: await analyticsManifest(),
      env: { TRUST_PROXY: "1" },
    });
  });
  afterAll(async () => {
    await sys?.close();
  });

  const viewsOf = async (visitor: string) =>
    (await exported(sys, "pageviews")).filter((v: Json) => v.visitorId === visitor);

  it("stores a page view with every field, enriched, and answers 204 with no body", async () => {
    const visitor = uniqueId("v-");
    const res = await beacon(sys, "/marketing/view", {
      v: visitor,
      s: "s-" + visitor,
      u: "https://www.demo.example/p?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=G-1&dl=AbCdEfGhIj&token=t0p&email=a%40b.c&code=42#section",
      t: "Product page",
      r: "https://www.google.com/search?q=coffee&access_token=x",
      sw: 1920,
      sh: 1080,
      vw: 1280,
      vh: 720,
      pr: 1.5,
      l: "de-DE",
      tz: "Europe/Berlin",
      c: { _ga: "GA1.1.123", _gcl_aw: "GCL.1.abc", _ym_uid: "99", _fbp: "fb.1.2", _fbc: "fb.1.3" },
    }, { "x-forwarded-for": "81.2.69.142" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const [view] = await viewsOf(visitor);
    expect(Object.keys(view)).toEqual(PAGE_VIEW_FIELDS);
    expect(view).toMatchObject({
      sessionId: "s-" + visitor,
      url:
        "https://www.demo.example/p?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=G-1&dl=AbCdEfGhIj&code=42",
      title: "Product page",
      referrer: "https://www.google.com/search?q=coffee",
      utmSource: "google",
      utmMedium: "cpc",
      utmCampaign: "spring",
      utmTerm: null,
      utmContent: null,
      clickIds: { gclid: "G-1" },
      adLink: "AbCdEfGhIj",
      adCookies: {
        _ga: "GA1.1.123",
        _gcl_aw: "GCL.1.abc",
        _ym_uid: "99",
        _fbp: "fb.1.2",
        _fbc: "fb.1.3",
      },
      screen: "1920x1080",
      viewport: "1280x720",
      pixelRatio: 1.5,
      language: "de-DE",
      timeZone: "Europe/Berlin",
      country: "GB",
      device: "desktop",
      browser: "Chrome",
      os: "Windows",
      channel: "paid",
      newVisitor: true,
      bot: false,
      ip: "81.2.69.0",
    });
  });

  it("takes the campaign from the landing URL the widget sends with a moved page", async () => {
    const visitor = uniqueId("land-");
    await beacon(sys, "/marketing/view", {
      v: visitor,
      s: "s-" + visitor,
      u: "https://demo.example/menu",
      a: "https://demo.example/?utm_source=news&utm_medium=email&dl=LaNdInG123&token=x",
      r: "",
    });
    const [view] = await viewsOf(visitor);
    expect(view).toMatchObject({
      url: "https://demo.example/menu",
      utmSource: "news",
      utmMedium: "email",
      adLink: "LaNdInG123",
      channel: "email",
    });
    expect(JSON.stringify(view)).not.toContain("token");
  });

  it("never stores ad cookies from a browser that sends Global Privacy Control", async () => {
    const visitor = uniqueId("gpc-");
    const cookies = { _ga: "GA1.1.9", _fbp: "fb.1.9" };
    const gpc = await beacon(sys, "/marketing/view", {
      v: visitor,
      u: "https://demo.example/gpc",
      c: cookies,
    }, { "sec-gpc": "1" });
    expect(gpc.status).toBe(204);
    await beacon(sys, "/marketing/view", {
      v: visitor,
      u: "https://demo.example/plain",
      c: cookies,
    });
    const views = await viewsOf(visitor);
    expect(views.map((v: Json) => [v.url, v.adCookies])).toEqual([
      ["https://demo.example/gpc", {}],
      ["https://demo.example/plain", cookies],
    ]);
  });

  it("looks the location up from the full address and stores IPv6 cut to /48", async () => {
    const visitor = uniqueId("v6-");
    await beacon(sys, "/marketing/view", { v: visitor, u: "https://demo.example/" }, {
      "x-forwarded-for": "2a00:1450:4001:80b::200e",
    });
    const [view] = await viewsOf(visitor);
    expect(view.country).toBe("DE");
    expect(view.ip).toBe("2a00:1450:4001::");
    expect(JSON.stringify(view)).not.toContain("200e");
  });

  it("flags bots but keeps their page views", async () => {
    const visitor = uniqueId("bot-");
    await beacon(sys, "/marketing/view", { v: visitor, u: "https://demo.example/" }, {
      "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    });
    const [view] = await viewsOf(visitor);
    expect(view.bot).toBe(true);
  });

  it("tells new from returning visitors", async () => {
    const visitor = uniqueId("ret-");
    await beacon(sys, "/marketing/view", { v: visitor, s: "first", u: "https://demo.example/a" });
    await beacon(sys, "/marketing/view", { v: visitor, s: "first", u: "https://demo.example/b" });
    await beacon(sys, "/marketing/view", { v: visitor, s: "second", u: "https://demo.example/c" });
    const views = await viewsOf(visitor);
    expect(views.map((v) => [v.url, v.newVisitor])).toEqual([
      ["https://demo.example/a", true],
      ["https://demo.example/b", true],
      ["https://demo.example/c", false],
    ]);
  });

  it("classifies the channel of a visit", async () => {
    const cases: [string, string, string][] = [
      ["https://demo.example/", "", "direct"],
      ["https://demo.example/", "https://duckduckgo.com/", "organic"],
      ["https://demo.example/", "https://t.co/xyz", "social"],
      ["https://demo.example/?utm_medium=email&utm_source=news", "", "email"],
      ["https://demo.example/", "https://someblog.example.org/post", "referral"],
      ["https://demo.example/?msclkid=1", "https://www.bing.com/", "paid"],
    ];
    for (const [u, r, expected] of cases) {
      const visitor = uniqueId("ch-");
      await beacon(sys, "/marketing/view", { v: visitor, s: visitor, u, r });
      expect((await viewsOf(visitor))[0].channel).toBe(expected);
    }
  });

  it("recognises the site by Origin, ignoring www. and the port, else by Referer", async () => {
    const visitor = uniqueId("origin-");
    const origins: Record<string, string>[] = [
      { origin: "https://www.demo.example" },
      { origin: "http://demo.example:8443" },
      { origin: "", referer: "https://demo.example/some/page?x=1" },
    ];
    for (const headers of origins) {
      const res = await beacon(
        sys,
        "/marketing/view",
        { v: visitor, u: "https://demo.example/" },
        headers,
      );
      expect(res.status).toBe(204);
    }
    expect(await viewsOf(visitor)).toHaveLength(3);
  });

  it("answers 400 unknown_domain for an unknown or missing origin, with CORS", async () => {
    for (const path of ["/marketing/view", "/marketing/act", "/marketing/lead"] as const) {
      const res = await beacon(
        sys,
        path,
        { u: "https://evil.example/", n: "note", email: "a@b.c" },
        {
          origin: "https://evil.example",
        },
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("access-control-allow-origin")).toBe("https://evil.example");
      expect(await res.json()).toEqual({ message: "unknown_domain" });
    }
    const none = await beacon(sys, "/marketing/view", { u: "https://demo.example/" }, {
      origin: "",
    });
    expect(none.status).toBe(400);
    expect((await none.json()).message).toBe("unknown_domain");
  });

  it("answers CORS preflights and adds the echoed origin to answers", async () => {
    for (const path of ["/marketing/view", "/marketing/act", "/marketing/lead"]) {
      const pre = await fetch(`${sys.url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://demo.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("https://demo.example");
      expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
      expect(pre.headers.get("access-control-allow-headers")).toContain("content-type");
      await pre.body?.cancel();
    }
    const res = await beacon(sys, "/marketing/view", { u: "https://demo.example/" }, {
      "content-type": "application/json",
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://demo.example");
  });

  it("stores a declared browser event, and drops an undeclared one with 204", async () => {
    const visitor = uniqueId("act-");
    const session = uniqueId("act-s-");
    await beacon(sys, "/marketing/view", {
      v: visitor,
      s: session,
      u: "https://demo.example/?utm_source=fb&utm_medium=paid_social&dl=Zz09Yy87Xx",
    });
    const stored = await beacon(sys, "/marketing/act", {
      n: "signup",
      p: { plan: "pro", seats: "3" },
      id: uniqueId("b-"),
      val: 990,
      v: visitor,
      s: session,
      u: "https://demo.example/signup#step2",
    });
    expect(stored.status).toBe(204);
    expect(await stored.text()).toBe("");
    for (const n of ["undeclared_event", "bad name!", "old_type"]) {
      const dropped = await beacon(sys, "/marketing/act", {
        n,
        v: visitor,
        s: session,
        u: "https://demo.example/",
      });
      expect(dropped.status).toBe(204);
    }
    const events = (await exported(sys, "events")).filter((e) => e.visitorId === visitor);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      name: "signup",
      source: "browser",
      params: { plan: "pro" },
      value: 990,
      currency: "EUR",
      url: "https://demo.example/signup",
      channel: "paid",
      adLink: "Zz09Yy87Xx",
    });
  });

  it("refuses a body that is not a JSON object, and one over 8 KB", async () => {
    expect((await beacon(sys, "/marketing/view", "not json")).status).toBe(400);
    expect((await beacon(sys, "/marketing/act", "[1]")).status).toBe(400);
    const big = await beacon(sys, "/marketing/view", {
      u: "https://demo.example/",
      t: "x".repeat(9000),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get("access-control-allow-origin")).toBe("https://demo.example");
  });

  it("stores leads from a form without ids, and from a server with a secret key, attributed", async () => {
    const form = await beacon(sys, "/marketing/lead", {
      form: "contact",
      name: "Ann",
      email: "ann@example.com",
      message: "Call me",
    });
    expect(form.status).toBe(204);
    const session = uniqueId("lead-s-");
    await beacon(sys, "/marketing/view", {
      v: "lead-visitor",
      s: session,
      u: "https://demo.example/?utm_source=partner&dl=LeadLink01",
    });
    const server = await fetch(`${sys.url}/marketing/lead`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-event-key": "sk_0123456789abcdef0123456789abcdef0123456789abcdef",
      },
      body: JSON.stringify({
        id: "crm-42",
        email: "bob@example.com",
        phone: "+49 30 1234",
        sid: session,
        fields: { plan: "pro" },
      }),
    });
    expect(server.status).toBe(200);
    const answer = await server.json();
    expect(answer).toMatchObject({ ok: true, duplicate: false });
    expect(answer.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await fetch(`${sys.url}/marketing/lead`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-event-key": "sk_0123456789abcdef0123456789abcdef0123456789abcdef",
      },
      body: JSON.stringify({ id: "crm-42", email: "bob@example.com" }),
    });
    expect(await again.json()).toEqual({ ok: true, duplicate: true, id: answer.id });
    const leads = await exported(sys, "leads");
    expect(leads.find((l) => l.email === "ann@example.com")).toMatchObject({
      source: "browser",
      form: "contact",
      visitorId: null,
      sessionId: null,
      channel: null,
    });
    expect(leads.filter((l) => l.leadId === "crm-42")).toEqual([
      expect.objectContaining({
        id: answer.id,
        source: "server",
        visitorId: "lead-visitor",
        channel: "referral",
        utmSource: "partner",
        adLink: "LeadLink01",
        fields: { plan: "pro" },
      }),
    ]);
    const bad = await beacon(sys, "/marketing/lead", { form: "contact" });
    expect(bad.status).toBe(400);
  });

  it("shares the event route's ids with the browser route", async () => {
    const id = uniqueId("shared-");
    await beacon(sys, "/marketing/act", { n: "note", id, u: "https://demo.example/" });
    const res = await postEvent(sys, { name: "note", id });
    expect(await res.json()).toEqual({ ok: true, duplicate: true });
  });

  it("keeps the user agent it was given for devices", async () => {
    const visitor = uniqueId("ua-");
    await beacon(sys, "/marketing/view", { v: visitor, u: "https://demo.example/" }, {
      "user-agent":
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
    });
    expect((await viewsOf(visitor))[0]).toMatchObject({ device: "mobile", os: "iOS", bot: false });
    expect(CHROME).toContain("Chrome");
  });
});
