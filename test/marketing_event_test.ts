/**
 * POST /marketing/event, the server route, on every storage: headers, names
 * and aliases, errors, idempotency (also for identical requests at once),
 * value and currency, parameter normalisation, session inheritance, and the
 * event export's fields.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  analyticsManifest,
  beacon,
  exported,
  type Json,
  postEvent,
  SECRET_KEY,
} from "./helpers/marketing.ts";
import { exportManifest, importManifest } from "../services/cli/site_manifest.ts";

const EVENT_FIELDS = [
  "name",
  "eventId",
  "visitorId",
  "sessionId",
  "url",
  "params",
  "value",
  "currency",
  "source",
  "channel",
  "utmSource",
  "utmMedium",
  "utmCampaign",
  "utmTerm",
  "utmContent",
  "adLink",
  "receivedAt",
];

describe.each(SYSTEM_STORAGES)("POST /marketing/event on %s", (storage) => {
  let sys: TestSystem;
  let manifest: Json;

  beforeAll(async () => {
    manifest = await analyticsManifest();
    sys = await startTestSystem({ storage, seed: manifest });
  });
  afterAll(async () => {
    await sys?.close();
  });

  const byId = async (id: string) =>
    (await exported(sys, "events")).filter((e) => e.eventId === id);

  it("stores a declared event and answers ok, not duplicate", async () => {
    const id = uniqueId("e-");
    const res = await postEvent(sys, {
      name: "signup",
      event_id: id,
      visitor_id: "v-1",
      params: { plan: "pro", seats: 3 },
      value: 4900,
      currency: "USD",
      url: "https://demo.example/thanks?token=abc&plan=pro#done",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(await res.json()).toEqual({ ok: true, duplicate: false });
    const [row] = await byId(id);
    expect(Object.keys(row)).toEqual(EVENT_FIELDS);
    expect(row).toMatchObject({
      name: "signup",
      visitorId: "v-1",
      sessionId: null,
      url: "https://demo.example/thanks?plan=pro",
      params: { plan: "pro", seats: 3 },
      value: 4900,
      currency: "USD",
      source: "server",
      channel: null,
      adLink: null,
    });
    expect(Date.parse(row.receivedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("accepts the aliases n, id, vid, sid, p, val, cur, u", async () => {
    const id = uniqueId("alias-");
    const res = await postEvent(sys, {
      n: "signup",
      id,
      vid: "v-a",
      sid: "s-none",
      p: { plan: "basic" },
      val: 100,
      cur: "GBP",
      u: "/pricing",
    });
    expect(await res.json()).toEqual({ ok: true, duplicate: false });
    expect((await byId(id))[0]).toMatchObject({
      visitorId: "v-a",
      sessionId: "s-none",
      params: { plan: "basic" },
      value: 100,
      currency: "GBP",
      url: "/pricing",
    });
  });

  it("answers a repeated event_id ok and duplicate, storing it once", async () => {
    const id = uniqueId("dup-");
    expect(await (await postEvent(sys, { name: "note", event_id: id })).json()).toEqual({
      ok: true,
      duplicate: false,
    });
    expect(await (await postEvent(sys, { name: "note", event_id: id, p: { n: 2 } })).json())
      .toEqual({ ok: true, duplicate: true });
    expect(await byId(id)).toHaveLength(1);
  });

  it("stores one of many identical requests sent at once", async () => {
    const id = uniqueId("race-");
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => postEvent(sys, { name: "note", id }).then((r) => r.json())),
    );
    expect(answers.filter((a) => a.ok && !a.duplicate)).toHaveLength(1);
    expect(answers.filter((a) => a.ok && a.duplicate)).toHaveLength(24);
    expect(await byId(id)).toHaveLength(1);
  });

  it("keeps ids per site: the same id on another site is another event", async () => {
    const other = structuredClone(manifest);
    other.site = { ...other.site, id: "other-site", domains: ["other.example"] };
    const otherKey = "sk_" + "ab".repeat(24);
    other.siteKeys = ["pk_" + "cd".repeat(16)];
    other.secretKeys = [otherKey];
    other.pages = [];
    other.sections = [];
    other.posts = [];
    await importManifest(sys.system.admin, JSON.stringify(other));
    const id = uniqueId("shared-");
    await postEvent(sys, { name: "note", id });
    const res = await postEvent(sys, { name: "note", id }, { "x-event-key": otherKey });
    expect(await res.json()).toEqual({ ok: true, duplicate: false });
    expect(await exported(sys, "events", "other-site")).toHaveLength(1);
  });

  it("stores value and currency only for revenue events; currency defaults to the type's", async () => {
    const revenue = uniqueId("rev-");
    const plain = uniqueId("plain-");
    await postEvent(sys, { name: "signup", id: revenue, value: 1299 });
    await postEvent(sys, { name: "note", id: plain, value: 1299, currency: "USD" });
    expect((await byId(revenue))[0]).toMatchObject({ value: 1299, currency: "EUR" });
    expect((await byId(plain))[0]).toMatchObject({ value: null, currency: null });
  });

  it("normalises parameters to their declared types and drops undeclared ones", async () => {
    const id = uniqueId("norm-");
    await postEvent(sys, {
      name: "note",
      id,
      params: { text: { a: 1 }, n: 3.141592, ok: "true", extra: "dropped" },
    });
    expect((await byId(id))[0].params).toEqual({ text: '{"a":1}', n: 3.1416, ok: true });
    const long = uniqueId("long-");
    await postEvent(sys, {
      name: "note",
      id: long,
      params: { text: "x".repeat(700), n: 1e13, ok: 1 },
    });
    const row = (await byId(long))[0];
    expect(row.params.text).toHaveLength(500);
    expect(row.params).toEqual({ text: "x".repeat(500), ok: true });
  });

  it("refuses a malformed body with invalid_body", async () => {
    for (const body of ["{not json", "[]", "null", '"name"', JSON.stringify({ params: {} })]) {
      const res = await postEvent(sys, body);
      expect(res.status).toBe(400);
      expect((await res.json()).message).toBe("invalid_body");
    }
    for (
      const body of [
        { name: "note", value: -1 },
        { name: "note", value: 1.5 },
        {
          name: "note",
          currency: "€",
        },
        { name: "note", event_id: "x".repeat(129) },
        { name: "note", params: "x" },
      ]
    ) {
      const res = await postEvent(sys, body);
      expect(res.status).toBe(400);
      expect((await res.json()).message).toBe("invalid_body");
    }
  });

  it("refuses a malformed name with invalid_event_name and an undeclared one with unknown_event", async () => {
    const bad = await postEvent(sys, { name: "9lives" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ message: "invalid_event_name" });
    const unknown = await postEvent(sys, { name: "never_declared" });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ message: "unknown_event", name: "never_declared" });
    const archived = await postEvent(sys, { name: "old_type" });
    expect(await archived.json()).toEqual({ message: "unknown_event", name: "old_type" });
  });

  it("answers 401 invalid_key for a missing, malformed, unknown or revoked key", async () => {
    const created = await sys.system.admin.auth.createKey({ siteId: "demo", kind: 2 });
    expect((await postEvent(sys, { name: "note" }, { "x-event-key": created.key })).status).toBe(
      200,
    );
    await sys.system.admin.auth.revokeKey({ key: created.key });
    for (const key of ["", "sk_short", "sk_" + "0".repeat(48), created.key]) {
      const res = await postEvent(sys, { name: "note" }, { "x-event-key": key });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message: "invalid_key" });
    }
  });

  it("answers 413 for a body over 8 KB, and accepts one of exactly 8 KB", async () => {
    const big = JSON.stringify({ name: "note", params: { text: "x".repeat(9000) } });
    expect((await postEvent(sys, big)).status).toBe(413);
    const base = JSON.stringify({ name: "note", params: { text: "" } });
    const exact = JSON.stringify({
      name: "note",
      params: { text: "y".repeat(8192 - base.length) },
    });
    expect(new TextEncoder().encode(exact).length).toBe(8192);
    expect((await postEvent(sys, exact)).status).toBe(200);
  });

  it("answers a body cut short by its client with 400 invalid_body, storing nothing", async () => {
    const id = uniqueId("cut-");
    const body = JSON.stringify({ name: "note", id });
    const { hostname, port } = new URL(sys.url);
    const conn = await Deno.connect({ hostname, port: Number(port) });
    const head = `POST /marketing/event HTTP/1.1\r\nHost: ${hostname}\r\n` +
      `Content-Type: application/json\r\nx-event-key: ${SECRET_KEY}\r\n` +
      `Content-Length: ${body.length}\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head + body.slice(0, 10)));
    await conn.closeWrite(); // the client gives up half way through its upload
    const answer = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"message":"invalid_body"');
    expect((await exported(sys, "events")).filter((e: Json) => e.eventId === id)).toEqual([]);
  });

  it("needs content-type application/json", async () => {
    const res = await postEvent(sys, { name: "note" }, { "content-type": "text/plain" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message: "invalid_body",
      problem: "content-type must be application/json",
    });
    const charset = await postEvent(sys, { name: "note" }, {
      "content-type": "application/json; charset=utf-8",
    });
    expect(charset.status).toBe(200);
  });

  it("answers other methods 405 and other marketing paths 404, as JSON", async () => {
    const get = await fetch(`${sys.url}/marketing/event`, {
      headers: { "x-event-key": SECRET_KEY },
    });
    expect(get.status).toBe(405);
    expect((await get.json()).message).toBe("method_not_allowed");
    const missing = await fetch(`${sys.url}/marketing/nothing`, { method: "POST" });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/json/);
    await missing.body?.cancel();
  });

  it("inherits channel, UTM tags and ad link from the session's first page view", async () => {
    const session = uniqueId("sess-");
    const view = await beacon(sys, "/marketing/view", {
      v: "v-inherit",
      s: session,
      u: "https://demo.example/?utm_source=spring&utm_medium=email&utm_campaign=launch&utm_term=t&utm_content=c&dl=AbCdEfGhIj",
      r: "",
    });
    expect(view.status).toBe(204);
    // A later page view of the same session with other tags does not change it.
    await beacon(sys, "/marketing/view", {
      v: "v-inherit",
      s: session,
      u: "https://demo.example/shop?utm_source=other&utm_medium=cpc",
      r: "https://demo.example/",
    });
    const id = uniqueId("inh-");
    await postEvent(sys, { name: "note", id, session_id: session });
    expect((await byId(id))[0]).toMatchObject({
      sessionId: session,
      visitorId: "v-inherit",
      channel: "email",
      utmSource: "spring",
      utmMedium: "email",
      utmCampaign: "launch",
      utmTerm: "t",
      utmContent: "c",
      adLink: "AbCdEfGhIj",
    });
    const views = (await exported(sys, "pageviews")).filter((v) => v.sessionId === session);
    expect(views.map((v) => [v.channel, v.adLink, v.utmSource])).toEqual([
      ["email", "AbCdEfGhIj", "spring"],
      ["email", "AbCdEfGhIj", "spring"],
    ]);
  });

  it("exports oldest first, from --since on", async () => {
    const all = await exported(sys, "events");
    const times = all.map((e) => Date.parse(e.receivedAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const middle = times[Math.floor(times.length / 2)];
    const since = await exported(sys, "events", "demo", BigInt(middle));
    expect(since.length).toBeGreaterThan(0);
    expect(since.length).toBeLessThan(all.length);
    expect(since.every((e) => Date.parse(e.receivedAt) >= middle)).toBe(true);
  });

  it("archives a dropped type that has data, keeping its name, and removes one without", async () => {
    await postEvent(sys, { name: "note", id: uniqueId("keep-") });
    const next = structuredClone(manifest);
    next.eventTypes = next.eventTypes.filter((t: Json) => t.name === "signup");
    next.eventTypes.push({ name: "fresh_type", params: [] });
    const report = await importManifest(sys.system.admin, JSON.stringify(next));
    expect(report.changes.ingest).toMatchObject({ eventTypesArchived: 1, eventTypesRemoved: 1 });
    const exportedSite = await exportManifest(sys.system.admin, "demo");
    const types = exportedSite.eventTypes as Json[];
    expect(types.find((t) => t.name === "note")?.status).toBe("archived");
    expect(types.find((t) => t.name === "old_type")).toBeUndefined();
    const refused = await postEvent(sys, { name: "note" });
    expect(await refused.json()).toEqual({ message: "unknown_event", name: "note" });
    expect((await exported(sys, "events")).some((e) => e.name === "note")).toBe(true);
    expect((await postEvent(sys, { name: "fresh_type" })).status).toBe(200);
  });
});
