/**
 * `deno task admin history import` on every storage: a site's events export
 * and page views export, brought into another site, give the same reports;
 * importing the same file again stores nothing twice; a file with one bad
 * line, or for an unknown site, is refused with the line's number and
 * nothing of it is stored. On a fresh installation (no live row ever
 * stored), a year of history lands in every month it falls in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { BOT, reportKeyOf, statsQuery, statsRows, statsSite, storeRows } from "./helpers/stats.ts";
import { runAdmin } from "./helpers/admin.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { listPartitions } from "../services/ingest/partitions.ts";

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
  {
    at: t("09:03:00"),
    kind: "lead" as const,
    body: { name: "Ann", email: "ann@example.com", v: "a", s: "sa", u: page("/contact") },
  },
  {
    at: t("10:06:00"),
    kind: "lead" as const,
    server: true,
    body: { lead_id: "crm-1", email: "bo@example.com", session_id: "sb", fields: { plan: "pro" } },
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
      "leads",
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

describe.each(SYSTEM_STORAGES)("history import, %s", (storage) => {
  let sys: TestSystem;
  let env: Record<string, string>;
  let dir: string;
  const file = (name: string, lines: string[]) => {
    const path = `${dir}/${name}`;
    Deno.writeTextFileSync(path, lines.join("\n") + "\n");
    return path;
  };
  const exported = async (what: "events" | "pageviews" | "leads", kind: string) => {
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
    // TO tells its systems of every lead stored: an imported lead must not be told again.
    const webhooks = [{
      url: "https://hooks.example/crm",
      events: ["lead.created"],
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    }];
    const to = file("to.json", [
      JSON.stringify(await statsSite(TO, "Europe/Berlin", { webhooks })),
    ]);
    const imported = await runAdmin(["import", to], env);
    expect(imported.code, imported.stderr).toBe(0);
    await storeRows(sys, FROM, ROWS);
  });
  afterAll(async () => {
    await sys?.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });

  /** lead.created messages of a site in the outbox. */
  const leadMessages = async (site: string) => {
    const [row] = await sys.system.platform.db!.query<{ n: number }>(
      `select count(*)::int as n from ingest.webhook_messages
        where site_id = $1 and type = 'lead.created'`,
      [site],
    );
    return row.n;
  };
  /** A site's leads export, parsed. */
  const leadsOf = async (site: string) => {
    const out = await runAdmin(["leads", "export", site], env);
    expect(out.code, out.stderr).toBe(0);
    return out.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  };

  it("brings a site's exports into another with the same reports, once, telling no lead", async () => {
    const lines = [
      ...await exported("pageviews", "pageview"),
      ...await exported("events", "event"),
      ...await exported("leads", "lead"),
    ];
    expect(lines.length).toBe(ROWS.length);
    const path = file("history.ndjson", lines);
    const first = await runAdmin(["history", "import", TO, path], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ pageviews: 7, events: 2, leads: 2, skipped: 0 });
    const reports = await answers(FROM);
    expect(reports[0]).toEqual([{ dimensions: [], metrics: expect.any(Array) }]);
    expect(await answers(TO)).toEqual(reports);
    const leads = await leadsOf(FROM);
    expect(leads.map((l) => l.email)).toEqual(["ann@example.com", "bo@example.com"]);
    expect(await leadsOf(TO)).toEqual(leads);
    // A restore or a move does not tell the site's systems of leads they were told of.
    expect(await leadMessages(TO)).toBe(0);
    const again = await runAdmin(["history", "import", TO, path], env);
    expect(JSON.parse(again.stdout)).toEqual({ pageviews: 0, events: 0, leads: 0, skipped: 11 });
    expect(await answers(TO)).toEqual(reports);
    expect(await leadsOf(TO)).toEqual(leads);
    // A live lead is told: the webhook is there to be told.
    await storeRows(sys, TO, [{
      at: t("12:00:00"),
      kind: "lead",
      body: { email: "c@example.com" },
    }]);
    expect(await leadMessages(TO)).toBe(1);
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
    // A lead the lead route would refuse refuses the file, the good lead before it too.
    const lead = { kind: "lead", email: "new@example.com", receivedAt: "2026-06-05T10:00:00Z" };
    const leads = file("leads.ndjson", [
      JSON.stringify(lead),
      JSON.stringify({ ...lead, email: null, form: "contact" }),
    ]);
    const leadsBefore = await leadsOf(TO);
    const refusedLead = await runAdmin(["history", "import", TO, leads], env);
    expect(refusedLead.code).toBe(1);
    expect(refusedLead.stderr).toMatch(/line 2.*a lead needs a name, email, phone or message/);
    expect(await leadsOf(TO)).toEqual(leadsBefore);
  });
});

describe.each(SYSTEM_STORAGES)("history import on a fresh installation, %s", (storage) => {
  const NOW = Date.parse("2026-11-28T12:00:00Z");
  const DAY_MS = 86_400_000;
  const SITE = "fresh-site";
  let sys: TestSystem;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    sys = await startTestSystem({
      storage,
      seed: await statsSite(SITE, "UTC"),
      clock: new ManualClock(NOW),
      // Migrated by this start itself, as a new installation is.
      emptyDatabase: true,
    });
    env = {
      INGEST_URL: sys.config.ingestUrl,
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
    };
    dir = await Deno.makeTempDir({ prefix: uniqueId("history-fresh") });
  });
  afterAll(async () => {
    await sys?.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });

  it("has this month's partitions and the next three's from the start", async () => {
    const months = (await listPartitions(sys.system.platform.db!))
      .map((p) => `${p.table} ${new Date(p.from).toISOString().slice(0, 7)}`);
    for (const month of ["2026-11", "2026-12", "2027-01", "2027-02"]) {
      expect(months).toContain(`page_views ${month}`);
      expect(months).toContain(`events ${month}`);
    }
  });

  it("stores a year of history, no live row before it, in every month it falls in", async () => {
    const days = [1, 30, 61, 120, 200, 300, 366];
    const lines = days.flatMap((ago) => {
      const at = new Date(NOW - ago * DAY_MS).toISOString();
      return [
        { kind: "pageview", url: `https://${SITE}.example/d${ago}`, visitorId: `v${ago}` },
        { kind: "event", name: "signup", visitorId: `v${ago}`, eventId: `e${ago}` },
      ].map((record) => JSON.stringify({ ...record, receivedAt: at }));
    });
    const path = `${dir}/year.ndjson`;
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const imported = await runAdmin(["history", "import", SITE, path], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ pageviews: 7, events: 7, leads: 0, skipped: 0 });
    const byMonth = await statsRows(sys, SITE, {
      metrics: ["pageviews", "events"],
      date_range: ["2025-11-01", "2026-11-28"],
      dimensions: ["time:month"],
    });
    const expected = new Map<string, number>();
    for (const ago of days) {
      const month = new Date(NOW - ago * DAY_MS).toISOString().slice(0, 7);
      expected.set(month, (expected.get(month) ?? 0) + 1);
    }
    expect(byMonth).toEqual([...expected].sort().map(([month, n]) => [month, n, n]));
    const again = await runAdmin(["history", "import", SITE, path], env);
    expect(JSON.parse(again.stdout)).toEqual({ pageviews: 0, events: 0, leads: 0, skipped: 14 });
  });
});
