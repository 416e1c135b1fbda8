/**
 * Reports on a real streaming standby (DATABASE_READ_URL), made with
 * Debian's Postgres by pg_basebackup: a system whose reports, funnels,
 * exports and share links' reads go to the standby, beside one reading the
 * primary, over the same data. The standby's own statistics show the reads
 * arrive there, the answers are the primary's, and they go on while the
 * primary is loaded and while it is down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { startTestSystem, type TestSystem } from "../helpers/system.ts";
import { reportKeyOf, statsSite, type StoredRow, storeRows } from "../helpers/stats.ts";
import { postgresBin, type ReplicaPair, startReplicaPair } from "../helpers/replica.ts";
import { runTask } from "../helpers/process.ts";
import { adminClients } from "../../services/cli/admin_clients.ts";

const SITE = "replica";
const BIN = postgresBin();
const DAY = Date.UTC(2026, 4, 4);

/** Views and events over a week, in a few visits, so each query below has something to count. */
function rows(): StoredRow[] {
  const out: StoredRow[] = [];
  for (let day = 0; day < 7; day++) {
    for (let visit = 0; visit < 5; visit++) {
      const at = DAY + day * 86_400_000 + visit * 3_600_000;
      const v = `v${visit % 3}`;
      const s = `s${day}-${visit}`;
      const path = ["/", "/pricing", "/blog"][(day + visit) % 3];
      out.push({ at, kind: "view", body: { u: `https://${SITE}.example${path}`, v, s } });
      out.push({
        at: at + 60_000,
        kind: "view",
        body: { u: `https://${SITE}.example/pricing`, v, s },
      });
      if (visit % 2 === 0) {
        out.push({ at: at + 120_000, kind: "event", body: { n: "signup", v, s } });
      }
    }
  }
  return out;
}

const QUERIES = [
  { metrics: ["visitors", "visits", "pageviews", "events", "bounce_rate"], date_range: "all" },
  {
    metrics: ["visitors", "pageviews"],
    dimensions: ["time:day"],
    date_range: ["2026-05-04", "2026-05-10"],
  },
  { metrics: ["visits"], dimensions: ["visit:entry_page"], date_range: "all" },
  { metrics: ["pageviews"], dimensions: ["event:page"], date_range: ["2026-05-05", "2026-05-06"] },
];
const FUNNEL = {
  steps: [{ page: "/" }, { page: "/pricing" }, { event: "signup" }],
  date_range: "all",
};

describe.runIf(BIN)("reports on a streaming standby", () => {
  let pair: ReplicaPair;
  let onStandby: TestSystem;
  let onPrimary: TestSystem;
  let standby: postgres.Sql;

  beforeAll(async () => {
    pair = await startReplicaPair(BIN!);
    const migrated = await runTask(["admin", "migrate", "--database"], {
      DATABASE_URL: pair.primaryUrl,
    });
    expect(migrated.code, migrated.stderr).toBe(0);
    const seed = await statsSite(SITE, "UTC");
    onStandby = await startTestSystem({
      storage: "postgres",
      databaseUrl: pair.primaryUrl,
      seed,
      env: { DATABASE_READ_URL: pair.standbyUrl },
    });
    onPrimary = await startTestSystem({ storage: "postgres", databaseUrl: pair.primaryUrl });
    await storeRows(onStandby, SITE, rows());
    await pair.caughtUp();
    standby = postgres(pair.standbyUrl, { max: 1, onnotice: () => {} });
  }, 300_000);

  afterAll(async () => {
    await standby?.end({ timeout: 1 });
    await onStandby?.close();
    await onPrimary?.close();
    await pair?.stop();
  });

  const ask = async (sys: TestSystem, path: string, body: unknown) => {
    const answer = await fetch(`${sys.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": reportKeyOf(SITE) },
      body: JSON.stringify(body),
    });
    return { status: answer.status, body: await answer.json() };
  };
  const everyAnswer = async (sys: TestSystem) => [
    ...await Promise.all(QUERIES.map((q) => ask(sys, "/stats/v1/query", q))),
    await ask(sys, "/stats/v1/funnel", FUNNEL),
  ];
  /**
   * Waits for the standby's statistics to count more than `than` (a backend
   * reports its counts when idle, at most once a second); the last counts.
   */
  const standbyReadsAbove = async (than: { scans: number; commits: number }) => {
    let now = await standbyReads();
    for (let i = 0; i < 100 && !(now.scans > than.scans && now.commits > than.commits); i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await standbyReads();
    }
    return now;
  };
  /** What the standby's statistics count: scans of the page views, and committed transactions. */
  const standbyReads = async () => {
    await standby`select pg_stat_clear_snapshot()`;
    const [row] = await standby<{ scans: number; commits: number }[]>`
      select (select coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::int
                from pg_stat_user_tables where schemaname = 'ingest'
                 and relname like 'page_views%') as scans,
             (select xact_commit::int from pg_stat_database where datname = current_database())
               as commits`;
    return row;
  };

  it("runs the reports on the standby, with the primary's answers", async () => {
    const [{ inRecovery }] = await standby`select pg_is_in_recovery() as "inRecovery"`;
    expect(inRecovery).toBe(true);
    const before = await standbyReads();
    const fromStandby = await everyAnswer(onStandby);
    await standbyReadsAbove(before);
    // Past the second in which each of the standby's backends reports its counts.
    await new Promise((r) => setTimeout(r, 1500));
    const after = await standbyReads();
    expect(after.scans).toBeGreaterThan(before.scans);
    expect(after.commits).toBeGreaterThan(before.commits);
    // The report connections are the standby's, named for their pool.
    const [{ n }] = await standby`
      select count(*)::int as n from pg_stat_activity where application_name = 'crm-reports'`;
    expect(n).toBeGreaterThan(0);

    // The system without DATABASE_READ_URL reads the primary; the standby sees none of it.
    const quiet = after;
    const fromPrimary = await everyAnswer(onPrimary);
    // Past the standby's second of delay in reporting its counts.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await standbyReads()).scans).toBe(quiet.scans);

    for (const answer of fromStandby) expect(answer.status).toBe(200);
    expect(fromStandby[0].body.results[0].metrics).toEqual([3, 35, 70, 21, 0]);
    expect(fromStandby).toEqual(fromPrimary);
  });

  it("serves an export page from the standby", async () => {
    const admin = adminClients(onStandby.config);
    const before = await standbyReads();
    const page = await admin.ingest.exportPageViews({ siteId: SITE, cursor: "", pageSize: 1000 });
    expect(page.rows.length).toBe(70);
    expect((await standbyReadsAbove(before)).scans).toBeGreaterThan(before.scans);
  });

  it("answers a share link's reads from the standby, as a report key's", async () => {
    const admin = adminClients(onStandby.config);
    const { link } = await admin.auth.createShareLink({ siteId: SITE });
    const byKey = await ask(onStandby, "/stats/v1/query", QUERIES[0]);
    const before = await standbyReads();
    const answer = await fetch(`${onStandby.url}/stats/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-share-link": link!.id },
      body: JSON.stringify(QUERIES[0]),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(byKey.body);
    expect((await standbyReadsAbove(before)).scans).toBeGreaterThan(before.scans);
  });

  it("keeps answering while the primary is loaded, and while it is down", async () => {
    const expected = await everyAnswer(onPrimary);
    const primary = postgres(pair.primaryUrl, { max: 4, onnotice: () => {} });
    try {
      // Four statements keep the primary's CPU busy while the reports run on the standby.
      const load = Promise.all(
        [0, 1, 2, 3].map(() =>
          primary`select count(*) from generate_series(1, 30000000)`.catch(() => {})
        ),
      );
      expect(await everyAnswer(onStandby)).toEqual(expected);
      await primary`select pg_cancel_backend(pid) from pg_stat_activity
                     where query like 'select count(*) from generate_series%'
                       and pid <> pg_backend_pid()`;
      await load;
    } finally {
      await primary.end({ timeout: 1 });
    }

    await pair.stopPrimary();
    try {
      expect(await everyAnswer(onStandby)).toEqual(expected);
    } finally {
      await pair.startPrimary();
    }
  });
});
