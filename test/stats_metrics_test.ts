/**
 * POST /stats/v1/query on a tiny data set whose every answer was computed by
 * hand (below), on every storage: each metric, each dimension, each filter
 * operator, the ordering, paging, totals and bots.
 *
 * Site "hand", zone UTC, all on 2026-05-01 (times UTC):
 *   visit A (session sA, visitor vA; from google.com, organic)
 *     10:00:00 view /home  10:00:30 view /pricing  10:01:00 view /home
 *     10:02:00 event signup 1000 EUR on /pricing                 → 3 views, 1 event, 120 s
 *   visit B (session sB, visitor vB; utm email campaign, ad link)
 *     11:00:00 view /home?utm_…&dl=…   11:05:00 lead           → bounce, 300 s
 *   visit C (session sC, visitor vA again: returning; direct)
 *     12:00:00 view /blog  12:01:00 purchase 2500 USD  12:01:30 purchase 500 EUR → 90 s
 *   row D: a view of /home without a session (visitor vD)      → a visit of its own, bounce, 0 s
 *   row E: a server signup 300 EUR, no session, no visitor     → a visit and a visitor of its own
 *   a bot's view of /home at 15:00 (session sBot)              → left out unless include.bots
 * So: 6 views, 4 events, 1 lead, 5 visits, 4 visitors (vA, vB, vD, E), revenue EUR 1800 and
 * USD 2500, bounce rate 2/5 = 40.0, duration (120+300+90+0+0)/5 = 102 s, 6/5 = 1.2 views
 * per visit; conversion to signup: vA and E of the 4 visitors = 50.0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { BOT, statsQuery, statsRows, statsSite, storeRows } from "./helpers/stats.ts";
import { exported } from "./helpers/marketing.ts";

const SITE = "hand";
const DAY = "2026-05-01";
const t = (time: string) => `${DAY}T${time}Z`;
const page = (path: string) => `https://hand.example${path}`;

const ROWS = [
  {
    at: t("10:00:00"),
    kind: "view" as const,
    body: { u: page("/home"), v: "vA", s: "sA", r: "https://www.google.com/" },
  },
  { at: t("10:00:30"), kind: "view" as const, body: { u: page("/pricing"), v: "vA", s: "sA" } },
  { at: t("10:01:00"), kind: "view" as const, body: { u: page("/home"), v: "vA", s: "sA" } },
  {
    at: t("10:02:00"),
    kind: "event" as const,
    body: { n: "signup", v: "vA", s: "sA", val: 1000, u: page("/pricing") },
  },
  {
    at: t("11:00:00"),
    kind: "view" as const,
    ip: "8.8.8.8",
    body: {
      u: page(
        "/home?utm_source=news&utm_medium=email&utm_campaign=spring&utm_term=beans&utm_content=hero&dl=AbCdEfGhIj",
      ),
      v: "vB",
      s: "sB",
    },
  },
  { at: t("11:05:00"), kind: "lead" as const, body: { email: "b@example.com", v: "vB", s: "sB" } },
  { at: t("12:00:00"), kind: "view" as const, body: { u: page("/blog"), v: "vA", s: "sC" } },
  {
    at: t("12:01:00"),
    kind: "event" as const,
    body: { n: "purchase", v: "vA", s: "sC", val: 2500, u: "/checkout" },
  },
  {
    at: t("12:01:30"),
    kind: "event" as const,
    body: { n: "purchase", v: "vA", s: "sC", val: 500, cur: "EUR", u: "/checkout" },
  },
  { at: t("13:00:00"), kind: "view" as const, body: { u: page("/home"), v: "vD" } },
  {
    at: t("14:00:00"),
    kind: "event" as const,
    server: true,
    body: { name: "signup", value: 300 },
  },
  {
    at: t("15:00:00"),
    kind: "view" as const,
    userAgent: BOT,
    body: { u: page("/home"), v: "vBot", s: "sBot" },
  },
];

const ALL = [
  "pageviews",
  "visits",
  "visitors",
  "events",
  "leads",
  "revenue",
  "bounce_rate",
  "visit_duration",
  "views_per_visit",
];

describe.each(SYSTEM_STORAGES)("reports on a hand-computed data set, %s", (storage) => {
  let sys: TestSystem;
  const rows = (body: Record<string, unknown>) =>
    statsRows(sys, SITE, { date_range: [DAY, DAY], ...body });

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await statsSite(SITE, "UTC") });
    await storeRows(sys, SITE, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("answers every metric", async () => {
    expect(await rows({ metrics: ALL })).toEqual([
      [6, 5, 4, 4, 1, { EUR: 1800, USD: 2500 }, 40, 102, 1.2],
    ]);
    expect(
      await rows({ metrics: ["conversion_rate"], filters: [["is", "event:name", ["signup"]]] }),
    ).toEqual([[50]]);
  });

  it("answers one row of zeros for a range without data", async () => {
    expect(
      await statsRows(sys, SITE, {
        metrics: [...ALL, "conversion_rate"],
        date_range: ["2026-04-01", "2026-04-02"],
        filters: [["is", "event:name", ["signup"]]],
      }),
    ).toEqual([[0, 0, 0, 0, 0, {}, 0, 0, 0, 0]]);
  });

  it("leaves bots out unless include.bots", async () => {
    expect(await rows({ metrics: ["pageviews", "visits", "visitors"] })).toEqual([[6, 5, 4]]);
    expect(
      await rows({ metrics: ["pageviews", "visits", "visitors"], include: { bots: true } }),
    ).toEqual([[7, 6, 5]]);
  });

  it("groups by visit:channel, revenue per currency, conversion per channel", async () => {
    expect(
      await rows({
        metrics: ["visits", "visitors", "pageviews", "events", "leads", "revenue"],
        dimensions: ["visit:channel"],
      }),
    ).toEqual([
      ["direct", 2, 2, 2, 2, 0, { EUR: 500, USD: 2500 }],
      ["email", 1, 1, 1, 0, 1, {}],
      ["organic", 1, 1, 3, 1, 0, { EUR: 1000 }],
      [null, 1, 1, 0, 1, 0, { EUR: 300 }],
    ]);
    expect(
      await rows({
        metrics: ["conversion_rate"],
        dimensions: ["visit:channel"],
        filters: [["is", "event:name", ["signup"]]],
      }),
    ).toEqual([["organic", 100], [null, 100], ["direct", 0], ["email", 0]]);
  });

  it("groups by the session's attribution and first page view", async () => {
    const by = async (dimension: string) =>
      await rows({ metrics: ["visits"], dimensions: [dimension] });
    expect(await by("visit:source")).toEqual([[null, 3], ["news", 1], ["www.google.com", 1]]);
    expect(await by("visit:utm_source")).toEqual([[null, 4], ["news", 1]]);
    expect(await by("visit:utm_medium")).toEqual([[null, 4], ["email", 1]]);
    expect(await by("visit:utm_campaign")).toEqual([[null, 4], ["spring", 1]]);
    expect(await by("visit:utm_term")).toEqual([[null, 4], ["beans", 1]]);
    expect(await by("visit:utm_content")).toEqual([[null, 4], ["hero", 1]]);
    expect(await by("visit:ad_link")).toEqual([[null, 4], ["AbCdEfGhIj", 1]]);
    expect(await by("visit:entry_page")).toEqual([["/home", 3], ["/blog", 1], [null, 1]]);
    expect(await by("visit:visitor_type")).toEqual([["new", 3], ["returning", 1], [null, 1]]);
    expect(await by("visit:device")).toEqual([["desktop", 4], [null, 1]]);
    expect(await by("visit:browser")).toEqual([["Chrome", 4], [null, 1]]);
    expect(await by("visit:os")).toEqual([["Windows", 4], [null, 1]]);
    // Countries as the page view export has them (the visits of A, C and D share an address).
    const views = await exported(sys, "pageviews", SITE);
    const ofB = views.find((v) => v.visitorId === "vB")!.country;
    const ofA = views.find((v) => v.visitorId === "vA")!.country;
    expect(ofA).not.toBe(ofB);
    expect(await by("visit:country")).toEqual(
      [[ofA, 3], [ofB, 1], [null, 1]],
    );
  });

  it("groups rows by event:name and event:page", async () => {
    expect(
      await rows({ metrics: ["events", "visitors", "visits"], dimensions: ["event:name"] }),
    ).toEqual([["purchase", 2, 1, 1], ["signup", 2, 2, 2], [null, 0, 3, 4]]);
    expect(
      await rows({ metrics: ["pageviews", "events", "leads"], dimensions: ["event:page"] }),
    ).toEqual([
      ["/home", 4, 0, 0],
      ["/blog", 1, 0, 0],
      ["/pricing", 1, 1, 0],
      ["/checkout", 0, 2, 0],
      [null, 0, 1, 1],
    ]);
  });

  it("groups by local hour", async () => {
    expect(await rows({ metrics: ["pageviews", "visits"], dimensions: ["time:hour"] })).toEqual([
      [`${DAY}T10:00:00+00:00`, 3, 1],
      [`${DAY}T11:00:00+00:00`, 1, 1],
      [`${DAY}T12:00:00+00:00`, 1, 1],
      [`${DAY}T13:00:00+00:00`, 1, 1],
      [`${DAY}T14:00:00+00:00`, 0, 1],
    ]);
  });

  it("selects rows with event: filters and counts their visits and visitors", async () => {
    const metrics = ["visits", "visitors", "events", "pageviews", "leads"];
    expect(await rows({ metrics, filters: [["is", "event:name", ["signup"]]] })).toEqual([
      [2, 2, 2, 0, 0],
    ]);
    // No page view (nor lead) matches an event:name filter, whatever its operator.
    expect(await rows({ metrics, filters: [["is_not", "event:name", ["signup"]]] })).toEqual([
      [1, 1, 2, 0, 0],
    ]);
    expect(await rows({ metrics, filters: [["contains_not", "event:name", ["sign"]]] })).toEqual([
      [1, 1, 2, 0, 0],
    ]);
    expect(await rows({ metrics, filters: [["contains", "event:page", ["PRIC"]]] })).toEqual([
      [1, 1, 1, 1, 0],
    ]);
    // A null page never contains a value: the signup without a URL and the lead stay in.
    expect(await rows({ metrics, filters: [["contains_not", "event:page", ["/home"]]] }))
      .toEqual([[4, 3, 4, 2, 1]]);
    expect(await rows({ metrics, filters: [["is", "event:page", ["/blog", "/checkout"]]] }))
      .toEqual([[1, 1, 2, 1, 0]]);
    // A visit's bounce, duration and page views are over all its rows, not only those selected.
    expect(
      await rows({
        metrics: ["bounce_rate", "visit_duration", "views_per_visit"],
        filters: [["contains", "event:page", ["pric"]]],
      }),
    ).toEqual([[0, 120, 3]]);
  });

  it("applies visit: filters to every row of the visit", async () => {
    const metrics = ["visits", "visitors", "pageviews", "events", "leads"];
    expect(await rows({ metrics, filters: [["is", "visit:entry_page", ["/home"]]] })).toEqual([
      [3, 3, 5, 1, 1],
    ]);
    // A null channel is not "direct", so is_not keeps the server event's visit.
    expect(await rows({ metrics, filters: [["is_not", "visit:channel", ["direct"]]] })).toEqual([
      [3, 3, 4, 2, 1],
    ]);
    expect(await rows({ metrics, filters: [["contains", "visit:source", ["GOOGLE"]]] })).toEqual([
      [1, 1, 3, 1, 0],
    ]);
    expect(
      await rows({
        metrics,
        filters: [["is", "visit:channel", ["direct", "organic"]], [
          "is",
          "visit:visitor_type",
          ["returning"],
        ]],
      }),
    ).toEqual([[1, 1, 1, 2, 0]]);
  });

  it("orders, pages and totals", async () => {
    const answer = await statsQuery(sys, {
      metrics: ["visits", "pageviews"],
      date_range: [DAY, DAY],
      dimensions: ["visit:channel"],
      include: { totals: true },
      limit: 2,
      offset: 1,
    }, (await statsSite(SITE, "UTC")).reportKeys[0]);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      results: [
        { dimensions: ["email"], metrics: [1, 1] },
        { dimensions: ["organic"], metrics: [1, 3] },
      ],
      totals: [5, 6],
      meta: { timeZone: "UTC", dateRange: [DAY, DAY], totalRows: 4 },
      query: {
        metrics: ["visits", "pageviews"],
        date_range: [DAY, DAY],
        dimensions: ["visit:channel"],
        filters: [],
        order_by: [["visits", "desc"]],
        include: { totals: true, bots: false },
        limit: 2,
        offset: 1,
        time_zone: null,
      },
    });
    expect(
      await rows({
        metrics: ["pageviews"],
        dimensions: ["event:page"],
        order_by: [["event:page", "asc"]],
      }),
    ).toEqual([["/blog", 1], ["/checkout", 0], ["/home", 4], ["/pricing", 1], [null, 0]]);
    expect(
      await rows({
        metrics: ["pageviews", "events"],
        dimensions: ["event:page"],
        order_by: [["events", "desc"], ["pageviews", "asc"]],
      }),
    ).toEqual([
      ["/checkout", 0, 2],
      [null, 0, 1],
      ["/pricing", 1, 1],
      ["/blog", 1, 0],
      ["/home", 4, 0],
    ]);
  });
});
