/**
 * POST /stats/v1/query: exit pages, referrers, screen classes, event
 * properties, minutes and the realtime ranges, on every storage, on a data
 * set whose every answer was computed by hand.
 *
 * Site "attrs", zone UTC, 2026-05-01 (times UTC); the clock stands at 12:00:20:
 *   visit A (sA, vA): 10:00 view /home (referrer https://news.example/story?x=1, screen 390x844)
 *     10:01 view /pricing  10:02 signup {plan: "pro", seats: 3}  10:03 view /thanks
 *     → entry /home, exit /thanks, that referrer, mobile
 *   visit B (sB, vB): 11:00:00 view /home (referrer https://attrs.example/other: the site
 *     itself, screen 1440x900)  11:00:30 signup {plan: "team", seats: 2.5}  11:01 view /pricing
 *     → exit /pricing, no referrer, desktop
 *   visit C (sC, vC): 12:00:00 view /blog (screen 1000x700)  12:00:10 note {ok: true, n: 7}
 *     12:30 view /contact → exit /contact, laptop; over the last 30 minutes exit /blog
 *   row D (vD, no session): 13:00 view /home (referrer https://search.example/, screen 600x800)
 *     → exit /home, that referrer, tablet
 *   row E (vE, no session): 13:30 view /home without a screen → screen unknown
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { reportKeyOf, statsQuery, statsRows, statsSite, storeRows } from "./helpers/stats.ts";
import { ManualClock } from "../services/lib/clock.ts";

const SITE = "attrs";
const DAY = "2026-05-01";
const t = (time: string) => `${DAY}T${time}Z`;
const page = (path: string) => `https://attrs.example${path}`;

const ROWS = [
  {
    at: t("10:00:00"),
    kind: "view" as const,
    body: {
      u: page("/home"),
      v: "vA",
      s: "sA",
      r: "https://news.example/story?x=1",
      sw: 390,
      sh: 844,
    },
  },
  { at: t("10:01:00"), kind: "view" as const, body: { u: page("/pricing"), v: "vA", s: "sA" } },
  {
    at: t("10:02:00"),
    kind: "event" as const,
    body: { n: "signup", v: "vA", s: "sA", p: { plan: "pro", seats: 3 }, u: page("/pricing") },
  },
  { at: t("10:03:00"), kind: "view" as const, body: { u: page("/thanks"), v: "vA", s: "sA" } },
  {
    at: t("11:00:00"),
    kind: "view" as const,
    body: {
      u: page("/home"),
      v: "vB",
      s: "sB",
      r: "https://attrs.example/other",
      sw: 1440,
      sh: 900,
    },
  },
  {
    at: t("11:00:30"),
    kind: "event" as const,
    body: { n: "signup", v: "vB", s: "sB", p: { plan: "team", seats: 2.5 } },
  },
  { at: t("11:01:00"), kind: "view" as const, body: { u: page("/pricing"), v: "vB", s: "sB" } },
  {
    at: t("12:00:00"),
    kind: "view" as const,
    body: { u: page("/blog"), v: "vC", s: "sC", sw: 1000, sh: 700 },
  },
  {
    at: t("12:00:10"),
    kind: "event" as const,
    body: { n: "note", v: "vC", s: "sC", p: { ok: true, n: 7 } },
  },
  { at: t("12:30:00"), kind: "view" as const, body: { u: page("/contact"), v: "vC", s: "sC" } },
  {
    at: t("13:00:00"),
    kind: "view" as const,
    body: { u: page("/home"), v: "vD", r: "https://search.example/", sw: 600, sh: 800 },
  },
  { at: t("13:30:00"), kind: "view" as const, body: { u: page("/home"), v: "vE" } },
];

describe.each(SYSTEM_STORAGES)("reports by the next attributes, %s", (storage) => {
  let sys: TestSystem;
  const rows = (body: Record<string, unknown>) =>
    statsRows(sys, SITE, { date_range: [DAY, DAY], ...body });

  beforeAll(async () => {
    const clock = new ManualClock(Date.parse(t("12:00:20")));
    sys = await startTestSystem({ storage, clock, seed: await statsSite(SITE, "UTC") });
    await storeRows(sys, SITE, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("breaks visits down by their exit page", async () => {
    expect(
      await rows({ metrics: ["visits", "pageviews"], dimensions: ["visit:exit_page"] }),
    ).toEqual([
      ["/home", 2, 2],
      ["/contact", 1, 2],
      ["/pricing", 1, 2],
      ["/thanks", 1, 3],
    ]);
    expect(
      await rows({ metrics: ["visitors"], filters: [["is", "visit:exit_page", ["/pricing"]]] }),
    )
      .toEqual([[1]]);
  });

  it("takes the exit page within the date range", async () => {
    // The last 30 minutes end before visit C's view of /contact.
    const answer = await statsQuery(sys, {
      metrics: ["visits"],
      dimensions: ["visit:exit_page"],
      date_range: "30m",
    }, reportKeyOf(SITE));
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([{ dimensions: ["/blog"], metrics: [1] }]);
  });

  it("breaks visits down by a referrer of another site", async () => {
    expect(await rows({ metrics: ["visits"], dimensions: ["visit:referrer"] })).toEqual([
      [null, 3],
      ["https://news.example/story?x=1", 1],
      ["https://search.example/", 1],
    ]);
    expect(
      await rows({
        metrics: ["visitors"],
        filters: [["contains", "visit:referrer", ["SEARCH.example"]]],
      }),
    ).toEqual([[1]]);
  });

  it("classes screens by width", async () => {
    expect(await rows({ metrics: ["visits"], dimensions: ["visit:screen"] })).toEqual([
      ["desktop", 1],
      ["laptop", 1],
      ["mobile", 1],
      ["tablet", 1],
      [null, 1],
    ]);
    expect(await rows({ metrics: ["visits"], filters: [["is_not", "visit:screen", ["mobile"]]] }))
      .toEqual([[4]]);
  });

  it("breaks rows down by an event property, numbers and booleans as text", async () => {
    expect(
      await rows({ metrics: ["events", "pageviews"], dimensions: ["event:props:plan"] }),
    ).toEqual([
      ["pro", 1, 0],
      ["team", 1, 0],
      [null, 1, 9],
    ]);
    expect(
      await rows({
        metrics: ["events"],
        dimensions: ["event:props:seats"],
        filters: [["is", "event:name", ["signup"]]],
      }),
    ).toEqual([["2.5", 1], ["3", 1]]);
    expect(await rows({ metrics: ["events"], dimensions: ["event:props:ok"] })).toEqual([
      [null, 2],
      ["true", 1],
    ]);
  });

  it("filters by an event property as by another event: dimension", async () => {
    expect(
      await rows({
        metrics: ["visitors", "visits", "events"],
        filters: [["is", "event:props:plan", ["pro"]]],
      }),
    ).toEqual([[1, 1, 1]]);
    // A page view has no property: is_not holds for it.
    expect(
      await rows({
        metrics: ["pageviews", "events"],
        filters: [["is_not", "event:props:plan", [
          "pro",
        ]]],
      }),
    ).toEqual([[9, 2]]);
  });

  it("refuses a property no event type declares", async () => {
    const answer = await statsQuery(sys, {
      metrics: ["events"],
      date_range: [DAY, DAY],
      dimensions: ["event:props:colour"],
    }, reportKeyOf(SITE));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ message: "invalid_query", field: "dimensions[0]" });
  });

  it("answers the last 30 and 5 minutes by minute", async () => {
    for (const range of ["30m", "5m"]) {
      const answer = await statsQuery(sys, {
        metrics: ["pageviews", "events", "visitors"],
        dimensions: ["time:minute"],
        date_range: range,
      }, reportKeyOf(SITE));
      expect(answer.status).toBe(200);
      expect(answer.body.results).toEqual([
        { dimensions: ["2026-05-01T12:00:00+00:00"], metrics: [1, 1, 1] },
      ]);
      expect(answer.body.meta.dateRange).toEqual([DAY, DAY]);
      expect(answer.body.query.date_range).toBe(range);
    }
  });

  it("counts minutes of a whole day, and refuses them over more than a day", async () => {
    expect(
      await rows({
        metrics: ["pageviews", "events"],
        dimensions: ["time:minute"],
        filters: [["is", "visit:exit_page", ["/pricing"]]],
      }),
    ).toEqual([
      ["2026-05-01T11:00:00+00:00", 1, 1],
      ["2026-05-01T11:01:00+00:00", 1, 0],
    ]);
    const answer = await statsQuery(sys, {
      metrics: ["pageviews"],
      dimensions: ["time:minute"],
      date_range: "7d",
    }, reportKeyOf(SITE));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ message: "invalid_query", field: "dimensions" });
  });

  it("compares the last 30 minutes with the 30 before", async () => {
    const answer = await statsQuery(sys, {
      metrics: ["pageviews", "events"],
      date_range: "30m",
      include: { compare: "previous_period" },
    }, reportKeyOf(SITE));
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([{
      dimensions: [],
      metrics: [1, 1],
      comparison: { dimensions: [], metrics: [1, 1], change: [0, 0] },
    }]);
    expect(answer.body.meta.compareDateRange).toEqual([
      "2026-05-01T11:00:20+00:00",
      "2026-05-01T11:30:20+00:00",
    ]);
  });
});
