/**
 * `deno task admin history import` on every storage: a site's events export
 * and page views export, brought into another site, give the same reports;
 * importing the same file again stores nothing twice; a file with one bad
 * line, or for an unknown site, is refused with the line's number and
 * nothing of it is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { BOT, reportKeyOf, statsQuery, statsSite, storeRows } from "./helpers/stats.ts";
import { runAdmin } from "./helpers/admin.ts";

const FROM = "from-site";
const TO = "to-site";
const DAY = "2026-06-02";
const t = (time: string) => `${DAY}T${time}Z`;
const page = (path: string) => `https://${FROM}.example${path}`;

const ROWS = [
  {
    at: t("09:00:00"),
    kind: "view" as const,
    body: { u: page("/?utm_source=news&utm_medium=email"), v: "a", s: "sa", sw: 390, sh: 800 },
  },
  { at: t("09:01:00"), kind: "view" as const, body: { u: page("/pricing"), v: "a", s: "sa" } },
  {
    at: t("09:02:00"),
    kind: "event" as const,
    body: { n: "signup", v: "a", s: "sa", p: { plan: "pro", seats: 3 }, val: 900 },
  },
  {
    at: t("10:00:00"),
    kind: "view" as const,
    body: { u: page("/blog"), v: "b", s: "sb", r: "https://www.google.com/" },
  },
  {
    at: t("10:05:00"),
    kind: "event" as const,
    server: true,
    body: { name: "purchase", session_id: "sb", value: 2500, event_id: "order-1" },
  },
  { at: t("11:00:00"), kind: "view" as const, body: { u: page("/"), v: "c" } },
  {
    at: t("12:00:00"),
    kind: "view" as const,
    userAgent: BOT,
    body: { u: page("/"), v: "bot", s: "sbot" },
  },
  { at: t("23:30:00"), kind: "view" as const, body: { u: page("/late"), v: "a", s: "sa2" } },
  {
    at: "2026-06-03T00:10:00Z",
    kind: "view" as const,
    body: { u: page("/after-midnight"), v: "a", s: "sa2" },
  },
];

const QUERIES: Record<string, unknown>[] = [
  {
    metrics: [
      "visitors",
      "visits",
      "pageviews",
      "events",
      "revenue",
      "bounce_rate",
      "visit_duration",
    ],
  },
  { metrics: ["visitors", "visits", "pageviews"], dimensions: ["time:day", "visit:channel"] },
  { metrics: ["visits", "pageviews"], dimensions: ["visit:exit_page", "visit:screen"] },
  { metrics: ["visitors", "visits"], dimensions: ["visit:source", "visit:visitor_type"] },
  { metrics: ["events", "revenue"], dimensions: ["event:props:plan", "event:name"] },
  { metrics: ["pageviews", "visitors"], dimensions: ["event:page"], include: { bots: true } },
  { metrics: ["conversion_rate"], filters: [["is", "event:name", ["signup"]]] },
];

describe.each(STORAGES)("history import, %s", (storage) => {
  let sys: TestSystem;
  let env: Record<string, string>;
  let dir: string;
  const file = (name: string, lines: string[]) => {
    const path = `${dir}/${name}`;
    Deno.writeTextFileSync(path, lines.join("\n") + "\n");
    return path;
  };
  const exported = async (what: "events" | "pageviews", kind: string) => {
    const out = await runAdmin([what, "export", FROM], env);
    expect(out.code, out.stderr).toBe(0);
    return out.stdout.trim().split("\n").map((l) => JSON.stringify({ kind, ...JSON.parse(l) }));
  };
  const answers = async (site: string) => {
    const out = [];
    for (const q of QUERIES) {
      const answer = await statsQuery(
        sys,
        { date_range: [DAY, "2026-06-03"], ...q },
        reportKeyOf(
          site,
        ),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      out.push(answer.body.results);
    }
    return out;
  };

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await statsSite(FROM, "Europe/Berlin") });
    env = { INGEST_URL: sys.config.ingestUrl, AUTH_URL: sys.config.authUrl };
    env.CONTENT_URL = sys.config.contentUrl;
    dir = await Deno.makeTempDir({ prefix: uniqueId("history") });
    const to = file("to.json", [JSON.stringify(await statsSite(TO, "Europe/Berlin"))]);
    const imported = await runAdmin(["import", to], env);
    expect(imported.code, imported.stderr).toBe(0);
    await storeRows(sys, FROM, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });

  it("brings a site's exports into another with the same reports, once", async () => {
    const lines = [
      ...await exported("pageviews", "pageview"),
      ...await exported("events", "event"),
    ];
    expect(lines.length).toBe(ROWS.length);
    const path = file("history.ndjson", lines);
    const first = await runAdmin(["history", "import", TO, path], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ pageviews: 7, events: 2, skipped: 0 });
    const reports = await answers(FROM);
    expect(reports[0]).toEqual([{ dimensions: [], metrics: expect.any(Array) }]);
    expect(await answers(TO)).toEqual(reports);
    const again = await runAdmin(["history", "import", TO, path], env);
    expect(JSON.parse(again.stdout)).toEqual({ pageviews: 0, events: 0, skipped: 9 });
    expect(await answers(TO)).toEqual(reports);
  });

  it("refuses a file with a bad line, or for an unknown site, storing nothing", async () => {
    const good = JSON.stringify({
      kind: "pageview",
      url: `https://${TO}.example/new`,
      visitorId: "n",
      receivedAt: "2026-06-05T10:00:00Z",
    });
    const future = JSON.stringify({
      kind: "pageview",
      url: `https://${TO}.example/`,
      receivedAt: "2099-01-01T00:00:00Z",
    });
    const path = file("bad.ndjson", [good, "", good.replace("/new", "/other"), future]);
    const refused = await runAdmin(["history", "import", TO, path], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/invalid_history.*line 4.*receivedAt is in the future/);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    const stored = await statsQuery(sys, {
      metrics: ["pageviews"],
      date_range: ["2026-06-05", "2026-06-05"],
    }, reportKeyOf(TO));
    expect(stored.body.results).toEqual([{ dimensions: [], metrics: [0] }]);
    const unknown = await runAdmin(["history", "import", "no-such-site", path], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("site_not_found");
    const undeclared = file("undeclared.ndjson", [
      JSON.stringify({ kind: "event", name: "refund", receivedAt: "2026-06-05T10:00:00Z" }),
    ]);
    const refusedEvent = await runAdmin(["history", "import", TO, undeclared], env);
    expect(refusedEvent.stderr).toMatch(/line 1.*not declared/);
  });
});
