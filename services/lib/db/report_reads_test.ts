import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";
import {
  inSnapshot,
  ReplayConflictError,
  ReportReads,
  ReportTimeoutError,
} from "./report_reads.ts";
import { type Database, storageUnavailable } from "./mod.ts";

describe.each(STORAGES)("ReportReads, %s", (kind) => {
  let fresh: FreshDatabase;

  beforeAll(async () => {
    fresh = await freshDatabase(kind);
    await fresh.db.exec("create table t (n int); insert into t values (1), (2)");
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("runs every query and transaction of a run in one read-only snapshot", async () => {
    const reads = new ReportReads(fresh.db, { timeoutMs: 10_000 });
    const answer = await reads.run(async (db) => {
      const [before] = await db.query<{ n: number }>("select count(*)::int as n from t");
      // A row committed meanwhile on another connection (the embedded store has one: skipped).
      if (kind === "postgres") {
        const other = await freshConnection(fresh);
        await other`insert into t values (3)`;
        await other.end();
      }
      const inner = await inSnapshot(
        db,
        (tx) => tx.query<{ n: number }>("select count(*)::int as n from t"),
      );
      const [{ readOnly }] = await db.query<{ readOnly: string }>(
        "select current_setting('transaction_read_only') as \"readOnly\"",
      );
      return { before: before.n, inner: inner[0].n, readOnly };
    });
    expect(answer).toEqual({ before: 2, inner: 2, readOnly: "on" });
    await expect(reads.run((db) => db.query("insert into t values (4)"))).rejects.toThrow(
      /read-only/,
    );
  });

  it("answers ReportTimeoutError at the deadline, and starts no statement after it", async () => {
    const reads = new ReportReads(fresh.db, { timeoutMs: 300 });
    let later: unknown;
    let ended!: () => void;
    const runEnded = new Promise<void>((resolve) => (ended = resolve));
    const error = await reads.run(async (db) => {
      try {
        // Cancelled by Postgres at the deadline; run to its end on the embedded store.
        await db.query("select pg_sleep(0.6)").catch(() => {});
        await new Promise((r) => setTimeout(r, 50));
        later = await db.query("select 1 as n").catch((e) => e);
      } finally {
        ended();
      }
    }).catch((e) => e);
    expect(error).toBeInstanceOf(ReportTimeoutError);
    expect(error.timeoutMs).toBe(300);
    await runEnded;
    expect(later).toBeInstanceOf(ReportTimeoutError);
    const answered = await reads.run((db) => db.query<{ n: number }>("select 1 as n"));
    expect(answered).toEqual([{ n: 1 }]);
  });
});

async function freshConnection(fresh: FreshDatabase) {
  const { default: postgres } = await import("postgres");
  return postgres(fresh.url!, { max: 1, onnotice: () => {} });
}

describe("ReportReads on a replica that cancels a report to replay", () => {
  it("tells the caller storage is unavailable for the moment, not an internal error", async () => {
    // A standby's recovery conflict reaches a read-only repeatable-read transaction as 40001.
    const conflict = Object.assign(new Error("canceling statement due to conflict with recovery"), {
      code: "40001",
    });
    const tx = {
      query: (text: string) =>
        text.startsWith("select set_config") ? Promise.resolve([]) : Promise.reject(conflict),
      exec: () => Promise.resolve(),
    };
    const replica: Database = {
      kind: "postgres",
      ...tx,
      transaction: (fn) => fn(tx),
      close: () => Promise.resolve(),
    };
    const error = await new ReportReads(replica, { timeoutMs: 10_000 })
      .run((db) => db.query("select count(*) from ingest.page_views"))
      .catch((e) => e);
    expect(error).toBeInstanceOf(ReplayConflictError);
    expect(error.cause).toBe(conflict);
    expect(storageUnavailable(error)).toBe(true);
  });
});
