/**
 * Reports on connections of their own, bounded by REPORT_TIMEOUT_MS, on a
 * Postgres server: a report held up (here by a lock on the table of sites it
 * reads first) is cancelled in Postgres at the deadline, no statement of it
 * still runs a second later (pg_stat_activity says so), the gateway answers
 * 504 `{"message":"timeout"}`, and page views and events go on being stored
 * meanwhile, with every report connection taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { DATABASE_URL } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { reportKeyOf, statsSite } from "./helpers/stats.ts";
import { SECRET_KEY } from "./helpers/marketing.ts";
import { adminClients } from "../services/cli/admin_clients.ts";
import { ConnectError, reasonOf } from "../services/lib/errors.ts";

const SITE = "slow";
const TIMEOUT_MS = 1500;

interface Statement {
  state: string;
  wait_event_type: string | null;
  query: string;
}
const REPORT_POOL = 2;

describe.runIf(DATABASE_URL)("reports past REPORT_TIMEOUT_MS", () => {
  let sys: TestSystem;
  let sql: postgres.Sql;

  beforeAll(async () => {
    sys = await startTestSystem({
      storage: "postgres",
      seed: await statsSite(SITE, "UTC", { secretKeys: [SECRET_KEY] }),
      env: { REPORT_TIMEOUT_MS: String(TIMEOUT_MS), REPORT_POOL_SIZE: String(REPORT_POOL) },
    });
    sql = postgres(sys.databaseUrl!, { max: 3, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await sys?.close();
  });

  const report = (path: string, body: unknown) =>
    fetch(`${sys.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": reportKeyOf(SITE) },
      body: JSON.stringify(body),
    });
  const query = () => report("/stats/v1/query", { metrics: ["visitors"], date_range: "year" });
  const funnel = () =>
    report("/stats/v1/funnel", { steps: [{ page: "/" }, { event: "signup" }], date_range: "year" });
  const event = (id: string) =>
    fetch(`${sys.url}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
      body: JSON.stringify({ name: "signup", event_id: id }),
    });

  /** The reports' statements running in this test's database (application_name crm-reports). */
  const reportStatements = async (): Promise<Statement[]> => [
    ...await sql<Statement[]>`
      select state, wait_event_type, query from pg_stat_activity
       where datname = current_database() and application_name = 'crm-reports'
         and state <> 'idle' and pid <> pg_backend_pid()`,
  ];

  /** Runs fn while another transaction holds the table (ingest.sites: every report reads it first). */
  async function whileLocked<T>(table: string, fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = sql.begin(async (tx) => {
      await tx.unsafe(`lock table ${table} in access exclusive mode`);
      locked();
      await released;
    });
    await isLocked;
    try {
      return await fn();
    } finally {
      release();
      await holder;
    }
  }

  it("cancels the statements in Postgres and answers 504 timeout, while events are stored", async () => {
    const started = performance.now();
    // A site that receives events has its shields in memory: a lock on its
    // row then holds the reports, not the events.
    const warm = await event(`warm-${started}`);
    await warm.body?.cancel();
    expect(warm.status).toBe(200);
    const outcome = await whileLocked("ingest.sites", async () => {
      // Twice as many reports as report connections: half of them wait for one.
      const answers = [query(), funnel(), query(), funnel()];
      // Every report connection is held up behind the lock.
      let waiting: Statement[] = [];
      for (let i = 0; i < 50 && waiting.length < REPORT_POOL; i++) {
        waiting = (await reportStatements()).filter((s) => s.wait_event_type === "Lock");
        if (waiting.length < REPORT_POOL) await new Promise((r) => setTimeout(r, 50));
      }
      // Events and page views do not wait for a report connection.
      const events = await Promise.all([0, 1, 2].map((i) => event(`timeout-${i}-${started}`)));
      const eventStatuses = events.map((e) => e.status);
      await Promise.all(events.map((e) => e.body?.cancel()));
      const settled = await Promise.all(
        answers.map(async (a) => ({ status: (await a).status, body: await (await a).json() })),
      );
      // A second after the answers, with the lock still held: nothing of them runs on.
      await new Promise((r) => setTimeout(r, 1000));
      return { waiting, eventStatuses, settled, runningAfter: await reportStatements() };
    });

    expect(outcome.waiting).toHaveLength(REPORT_POOL);
    expect(outcome.eventStatuses).toEqual([200, 200, 200]);
    for (const answer of outcome.settled) {
      expect(answer).toEqual({ status: 504, body: { message: "timeout" } });
    }
    const stored = await sql`select count(*)::int as n from ingest.events
                              where event_id like ${`timeout-%-${started}`}`;
    expect(stored[0].n).toBe(3);
    // The statements were cancelled at the deadline, not left to wait for the lock.
    expect(outcome.runningAfter).toEqual([]);
  });

  it("cancels an export page the same way, as the admin call's timeout", async () => {
    const admin = adminClients(sys.config);
    // The export finds the site first, then reads its page of page views on the reports' connections.
    const { error, runningAfter } = await whileLocked("ingest.page_views", async () => {
      const error = await admin.ingest.exportPageViews({ siteId: SITE, cursor: "", pageSize: 10 })
        .then(() => undefined, (e) => e);
      await new Promise((r) => setTimeout(r, 1000));
      return { error, runningAfter: await reportStatements() };
    });
    expect(error).toBeInstanceOf(ConnectError);
    expect(reasonOf(error)?.reason).toBe("timeout");
    expect(runningAfter).toEqual([]);
  });

  it("answers again once nothing holds it up: the report connections were given back", async () => {
    for (let i = 0; i < REPORT_POOL + 1; i++) {
      const answer = await query();
      expect(answer.status).toBe(200);
      await answer.body?.cancel();
    }
  });
});
