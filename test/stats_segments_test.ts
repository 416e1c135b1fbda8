/**
 * Segments on every storage: saved, listed, renamed and deleted through
 * /stats/v1/segments, upserted by a manifest, and applied as the filter
 * ["is" | "is_not", "segment", [ID, ...]] in queries and funnels, on a data
 * set whose answers were worked out by hand.
 *
 * Site "seg", zone UTC, 2026-05-01 (times UTC):
 *   A (sA, vA): 10:00 view /pricing  10:01 signup
 *   B (sB, vB): 10:00 view /home     10:05 view /pricing
 *   C (sC, vC): 11:00 view /pricing
 *   D (sD, vD): 12:00 view /blog     12:01 signup
 *   E (sE, vE): 13:00 view /home
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { reportKeyOf, statsSite, storeRows } from "./helpers/stats.ts";

const SITE = "seg";
const DAY = "2026-05-01";
const KEY = reportKeyOf(SITE);
const t = (time: string) => `${DAY}T${time}Z`;
const view = (time: string, path: string, v: string, s: string) => ({
  at: t(time),
  kind: "view" as const,
  body: { u: `https://seg.example${path}`, v, s },
});
const signup = (time: string, v: string, s: string) => ({
  at: t(time),
  kind: "event" as const,
  body: { n: "signup", v, s },
});

const ROWS = [
  view("10:00:00", "/pricing", "vA", "sA"),
  signup("10:01:00", "vA", "sA"),
  view("10:00:00", "/home", "vB", "sB"),
  view("10:05:00", "/pricing", "vB", "sB"),
  view("11:00:00", "/pricing", "vC", "sC"),
  view("12:00:00", "/blog", "vD", "sD"),
  signup("12:01:00", "vD", "sD"),
  view("13:00:00", "/home", "vE", "sE"),
];

const PRICING_ENTRY = [["is", "visit:entry_page", ["/pricing"]]];
const HOME_ENTRY = [["is", "visit:entry_page", ["/home"]]];
const SIGNED_UP = [["is", "event:name", ["signup"]]];

describe.each(SYSTEM_STORAGES)("segments, %s", (storage) => {
  let sys: TestSystem;
  const call = async (method: string, path: string, body?: unknown, key = KEY) => {
    const response = await fetch(`${sys.url}/stats/v1${path}`, {
      method,
      headers: { "content-type": "application/json", "x-report-key": key },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const save = async (name: string, filters: unknown) => {
    const answer = await call("POST", "/segments", { name, filters });
    if (answer.status !== 201) throw new Error(JSON.stringify(answer));
    return answer.body.id as string;
  };
  const totals = async (filters: unknown[], metrics = ["visitors", "pageviews", "events"]) => {
    const answer = await call("POST", "/query", { metrics, date_range: [DAY, DAY], filters });
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    return answer.body.results[0].metrics;
  };

  beforeAll(async () => {
    sys = await startTestSystem({
      storage,
      seed: await statsSite(SITE, "UTC", {
        segments: [{ name: "From the manifest", filters: HOME_ENTRY }],
      }),
    });
    await storeRows(sys, SITE, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("saves, lists by name, renames and deletes a segment", async () => {
    const created = await call("POST", "/segments", {
      name: " Pricing entry ",
      filters: PRICING_ENTRY,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^seg_[0-9a-f]{24}$/),
      name: "Pricing entry",
      filters: PRICING_ENTRY,
    });
    const id = created.body.id;
    const listed = await call("GET", "/segments");
    expect(listed.status).toBe(200);
    expect(listed.body.segments.map((s: { name: string }) => s.name)).toEqual([
      "From the manifest",
      "Pricing entry",
    ]);
    expect(listed.body.segments[1]).toEqual(created.body);

    const renamed = await call("PUT", `/segments/${id}`, {
      name: "A pricing entry",
      filters: PRICING_ENTRY,
    });
    expect(renamed).toEqual({
      status: 200,
      body: { id, name: "A pricing entry", filters: PRICING_ENTRY },
    });
    expect((await call("GET", "/segments")).body.segments.map((s: { name: string }) => s.name))
      .toEqual(["A pricing entry", "From the manifest"]);

    expect(await call("DELETE", `/segments/${id}`)).toEqual({ status: 204, body: undefined });
    expect(await call("DELETE", `/segments/${id}`)).toEqual({
      status: 404,
      body: { message: "segment_not_found" },
    });
    expect((await call("GET", "/segments")).body.segments).toHaveLength(1);
  });

  it("refuses a taken name, an unknown id, broken rules and a bad key", async () => {
    const id = await save("Taken", PRICING_ENTRY);
    const other = await save("Other", HOME_ENTRY);
    expect(await call("POST", "/segments", { name: "Taken", filters: HOME_ENTRY })).toEqual({
      status: 409,
      body: { message: "segment_exists" },
    });
    expect((await call("PUT", `/segments/${other}`, { name: "Taken", filters: HOME_ENTRY })).body)
      .toEqual({ message: "segment_exists" });
    const missing = "seg_" + "0".repeat(24);
    for (const path of [`/segments/${missing}`, "/segments/nope"]) {
      expect(await call("PUT", path, { name: "x", filters: HOME_ENTRY })).toEqual({
        status: 404,
        body: { message: "segment_not_found" },
      });
    }
    const cases: [unknown, string][] = [
      [{ name: "", filters: HOME_ENTRY }, "name"],
      [{ name: "x".repeat(81), filters: HOME_ENTRY }, "name"],
      [{ filters: HOME_ENTRY }, "name"],
      [{ name: "x", filters: [] }, "filters"],
      [{ name: "x", filters: Array(11).fill(HOME_ENTRY[0]) }, "filters"],
      [{ name: "x", filters: [["is", "time:day", ["2026-05-01"]]] }, "filters[0]"],
      [{ name: "x", filters: [["is", "event:props:nope", ["1"]]] }, "filters[0]"],
      [{ name: "x", filters: [["is", "segment", [id]]] }, "filters[0]"],
    ];
    for (const [body, field] of cases) {
      const answer = await call("POST", "/segments", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ message: "invalid_query", field });
    }
    expect((await call("GET", "/segments", undefined, reportKeyOf("other"))).status).toBe(401);
    await call("DELETE", `/segments/${id}`);
    await call("DELETE", `/segments/${other}`);
  });

  it("keeps the visits of a segment as its inline filters do", async () => {
    const pricing = await save("Pricing visits", PRICING_ENTRY);
    expect(await totals([["is", "segment", [pricing]]])).toEqual(await totals(PRICING_ENTRY));
    expect(await totals([["is", "segment", [pricing]]])).toEqual([2, 2, 1]);
    // is_not: the visits of none, as the inline filter's complement.
    expect(await totals([["is_not", "segment", [pricing]]])).toEqual([3, 4, 1]);
    const home = await save("Home visits", HOME_ENTRY);
    expect(await totals([["is", "segment", [pricing, home]]])).toEqual([4, 5, 1]);
    await call("DELETE", `/segments/${pricing}`);
    await call("DELETE", `/segments/${home}`);
  });

  it("keeps whole visits for a segment's event: filters", async () => {
    const signed = await save("Signed up", SIGNED_UP);
    // The visits A and D, with all their rows (an inline event:name filter keeps the events only).
    expect(await totals([["is", "segment", [signed]]])).toEqual([2, 2, 2]);
    expect(await totals(SIGNED_UP)).toEqual([2, 0, 2]);
    expect(await totals([["is_not", "segment", [signed]]])).toEqual([3, 4, 0]);
    const pricing = await save("Pricing", PRICING_ENTRY);
    expect(await totals([["is", "segment", [pricing, signed]]])).toEqual([3, 3, 2]);
    // With a breakdown, and beside an inline filter.
    const byEntry = await call("POST", "/query", {
      metrics: ["visits"],
      date_range: [DAY, DAY],
      dimensions: ["visit:entry_page"],
      filters: [["is", "segment", [signed]]],
      order_by: [["visit:entry_page", "asc"]],
    });
    expect(byEntry.body.results).toEqual([
      { dimensions: ["/blog"], metrics: [1] },
      { dimensions: ["/pricing"], metrics: [1] },
    ]);
    expect(byEntry.body.query.filters).toEqual([["is", "segment", [signed]]]);
    expect(
      await totals([["is", "segment", [signed]], ["is", "visit:entry_page", ["/blog"]]]),
    ).toEqual([1, 1, 1]);
    await call("DELETE", `/segments/${signed}`);
    await call("DELETE", `/segments/${pricing}`);
  });

  it("lets a share link list segments, and only a report key write them", async () => {
    const share = (await sys.system.admin.auth.createShareLink({ siteId: SITE })).link!.id;
    const shared = (method: string, path: string, body?: unknown) =>
      fetch(`${sys.url}/stats/v1${path}`, {
        method,
        headers: { "content-type": "application/json", "x-share-link": share },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
    const listed = await shared("GET", "/segments");
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).segments.map((s: { name: string }) => s.name)).toEqual([
      "From the manifest",
    ]);
    const id = JSON.parse(listed.body).segments[0].id;
    for (
      const [method, path] of [["POST", "/segments"], ["PUT", `/segments/${id}`], [
        "DELETE",
        `/segments/${id}`,
      ]]
    ) {
      const answer = await shared(method, path, { name: "x", filters: HOME_ENTRY });
      expect(answer, `${method} ${path}`).toEqual({
        status: 401,
        body: JSON.stringify({ message: "invalid_key" }),
      });
    }
    expect((await call("GET", "/segments")).body.segments).toHaveLength(1);
  });

  it("filters funnels by segments, and refuses an unknown id", async () => {
    const signed = await save("Funnel signups", SIGNED_UP);
    const answer = await call("POST", "/funnel", {
      date_range: [DAY, DAY],
      steps: [{ page: "/pricing" }, { event: "signup" }],
      filters: [["is", "segment", [signed]]],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.steps.map((s: { visitors: number }) => s.visitors)).toEqual([1, 1]);
    const unknown = await call("POST", "/query", {
      metrics: ["visitors"],
      date_range: [DAY, DAY],
      filters: [["is", "segment", ["seg_" + "f".repeat(24)]]],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ message: "invalid_query", field: "filters[0]" });
    const contains = await call("POST", "/query", {
      metrics: ["visitors"],
      date_range: [DAY, DAY],
      filters: [["contains", "segment", [signed]]],
    });
    expect(contains.body).toMatchObject({ message: "invalid_query", field: "filters[0]" });
    await call("DELETE", `/segments/${signed}`);
  });
});
