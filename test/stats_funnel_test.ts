/**
 * POST /stats/v1/funnel on every storage, on a data set whose every answer
 * was computed by hand.
 *
 * Site "fun", zone UTC, 2026-05-01 (times UTC):
 *   F1 (sF1, vF1): 10:00 view /pricing  10:01 signup  10:02 lead      → pricing, signup, lead
 *   F2 (sF2, vF2): 10:00 view /home  10:01 signup  10:02 view /pricing → pricing only (signup first)
 *   F3 (sF3, vF1): 11:00 view /pricing  11:01 view /pricing          → pricing twice
 *   F4 (sF4, vF4): 12:00 view /pricing/plans                        → only with a wildcard
 *   F5 (sF5, vF5): 13:00 view /pricing  13:01 signup                 → pricing, signup
 *   a bot (sBot, vBot): 14:00 view /pricing  14:01 signup  14:02 lead → only with include.bots
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { BOT, REPORT_KEY, reportKeyOf, statsSite, storeRows } from "./helpers/stats.ts";

const SITE = "fun";
const DAY = "2026-05-01";
const t = (time: string) => `${DAY}T${time}Z`;
const page = (path: string) => `https://fun.example${path}`;
const view = (time: string, path: string, v: string, s: string, userAgent?: string) => ({
  at: t(time),
  kind: "view" as const,
  body: { u: page(path), v, s },
  userAgent,
});
const signup = (time: string, v: string, s: string, userAgent?: string) => ({
  at: t(time),
  kind: "event" as const,
  body: { n: "signup", v, s },
  userAgent,
});
const lead = (time: string, v: string, s: string, userAgent?: string) => ({
  at: t(time),
  kind: "lead" as const,
  body: { email: "x@example.com", v, s },
  userAgent,
});

const ROWS = [
  view("10:00:00", "/pricing", "vF1", "sF1"),
  signup("10:01:00", "vF1", "sF1"),
  lead("10:02:00", "vF1", "sF1"),
  view("10:00:00", "/home", "vF2", "sF2"),
  signup("10:01:00", "vF2", "sF2"),
  view("10:02:00", "/pricing", "vF2", "sF2"),
  view("11:00:00", "/pricing", "vF1", "sF3"),
  view("11:01:00", "/pricing", "vF1", "sF3"),
  view("12:00:00", "/pricing/plans", "vF4", "sF4"),
  view("13:00:00", "/pricing", "vF5", "sF5"),
  signup("13:01:00", "vF5", "sF5"),
  view("14:00:00", "/pricing", "vBot", "sBot", BOT),
  signup("14:01:00", "vBot", "sBot", BOT),
  lead("14:02:00", "vBot", "sBot", BOT),
];

const STEPS = [{ page: "/pricing" }, { event: "signup" }, { lead: true }];

describe.each(SYSTEM_STORAGES)("funnels, %s", (storage) => {
  let sys: TestSystem;
  const funnel = async (body: Record<string, unknown>, key = reportKeyOf(SITE)) => {
    const response = await fetch(`${sys.url}/stats/v1/funnel`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": key },
      body: JSON.stringify({ date_range: [DAY, DAY], ...body }),
    });
    return { status: response.status, body: await response.json() };
  };
  const reached = async (body: Record<string, unknown>) => {
    const answer = await funnel(body);
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    // deno-lint-ignore no-explicit-any
    return answer.body.steps.map((s: any) => [s.visitors, s.visits, s.conversionRate, s.dropOff]);
  };

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await statsSite(SITE, "UTC") });
    await storeRows(sys, SITE, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("counts the visitors and visits reaching each step in order", async () => {
    const answer = await funnel({ steps: STEPS });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      steps: [
        { step: { page: "/pricing" }, visitors: 3, visits: 4, conversionRate: 100, dropOff: 0 },
        { step: { event: "signup" }, visitors: 2, visits: 2, conversionRate: 66.7, dropOff: 1 },
        { step: { lead: true }, visitors: 1, visits: 1, conversionRate: 33.3, dropOff: 1 },
      ],
      meta: { timeZone: "UTC", dateRange: [DAY, DAY] },
    });
  });

  it("lets one row serve one step, and * match any run", async () => {
    expect(await reached({ steps: [{ page: "/pricing" }, { page: "/pricing" }] })).toEqual([
      [3, 4, 100, 0],
      [1, 1, 33.3, 2],
    ]);
    expect(await reached({ steps: [{ page: "/pricing*" }, { event: "signup" }] })).toEqual([
      [4, 5, 100, 0],
      [2, 2, 50, 2],
    ]);
  });

  it("keeps bots out unless asked, and filters whole visits", async () => {
    expect(await reached({ steps: STEPS, include: { bots: true } })).toEqual([
      [4, 5, 100, 0],
      [3, 3, 75, 1],
      [2, 2, 50, 1],
    ]);
    expect(
      await reached({ steps: STEPS, filters: [["is", "visit:entry_page", ["/pricing"]]] }),
    ).toEqual([
      [2, 3, 100, 0],
      [2, 2, 100, 0],
      [1, 1, 50, 1],
    ]);
  });

  it("answers zeros for a range without data", async () => {
    expect(await reached({ steps: STEPS, date_range: ["2026-06-01", "2026-06-30"] })).toEqual([
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
  });

  it("refuses a bad key and a bad body as the query does", async () => {
    expect((await funnel({ steps: STEPS }, REPORT_KEY.replace("0", "f"))).status).toBe(401);
    const cases: [Record<string, unknown>, string][] = [
      [{ steps: [{ page: "/" }] }, "steps"],
      [{ steps: [{ page: "/" }, { event: "unknown" }] }, "steps[1]"],
      [{ steps: STEPS, filters: [["is", "event:page", ["/"]]] }, "filters[0]"],
      [{ steps: STEPS, include: { totals: true } }, "include"],
      [{ steps: STEPS, date_range: "90d" }, "date_range"],
    ];
    for (const [body, field] of cases) {
      const answer = await funnel(body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ message: "invalid_query", field });
    }
  });
});
