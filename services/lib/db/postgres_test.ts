import { describe, expect, it } from "vitest";
import { StorageTimeoutError, withStorageDeadline } from "./mod.ts";
import { DATABASE_URL } from "../../../test/helpers/env.ts";
import { freshDatabase } from "../../../test/helpers/storage.ts";

describe.runIf(DATABASE_URL)("the prepare option on Postgres", () => {
  it("keeps a statement prepared on its connection only when asked", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      const prepared = await fresh.db.transaction(async (tx) => {
        await tx.query("select $1::int + 1 as plain", [1]);
        await tx.query("select $1::int + 2 as kept", [1], { prepare: true });
        return await tx.query<{ statement: string }>(
          // postgres.js prepares its own query of the array types on each connection.
          "select statement from pg_prepared_statements where statement like 'select $1%'",
        );
      });
      expect(prepared.map((p) => p.statement)).toEqual(["select $1::int + 2 as kept"]);
    } finally {
      await fresh.drop();
    }
  });
});

describe.runIf(DATABASE_URL)("a transaction on Postgres", () => {
  it("commits what it wrote, in one transaction, and sees its own writes", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      await fresh.db.exec("create table t (n int)");
      const inside = await fresh.db.transaction(async (tx) => {
        await tx.query("insert into t values (1), (2)");
        // The insert's transaction id, had it run on its own before BEGIN, would be gone (null).
        const [{ xid }] = await tx.query<{ xid: string | null }>(
          "select txid_current_if_assigned()::text as xid",
        );
        const [{ again }] = await tx.query<{ again: string }>(
          "select txid_current()::text as again",
        );
        const [{ n }] = await tx.query<{ n: number }>("select count(*)::int as n from t");
        return { xid, again, n };
      });
      // BEGIN went out before the first statement: every statement ran in one transaction.
      expect(inside.xid).not.toBeNull();
      expect(inside.again).toBe(inside.xid);
      expect(inside.n).toBe(2);
      expect(await fresh.db.query("select n from t order by n")).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await fresh.drop();
    }
  });

  it("rolls back everything when its function throws, and the connection serves again", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      await fresh.db.exec("create table t (n int primary key)");
      await expect(fresh.db.transaction(async (tx) => {
        await tx.query("insert into t values (1)");
        throw new Error("changed my mind");
      })).rejects.toThrow("changed my mind");
      await expect(fresh.db.transaction(async (tx) => {
        await tx.query("insert into t values (2)");
        await tx.query("insert into t values (2)");
      })).rejects.toThrow(/duplicate key/);
      expect(await fresh.db.query("select n from t")).toEqual([]);
      // More transactions than the pool has connections: each was given back.
      for (let i = 10; i < 40; i++) {
        await fresh.db.transaction((tx) => tx.query("insert into t values ($1)", [i]));
      }
      expect(await fresh.db.query("select count(*)::int as n from t")).toEqual([{ n: 30 }]);
    } finally {
      await fresh.drop();
    }
  });
  it("sends COMMIT behind the statement marked last, which ran inside the transaction", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      await fresh.db.exec("create table t (n int primary key)");
      const ids = await fresh.db.transaction(async (tx) => {
        const [{ xid }] = await tx.query<{ xid: string }>(
          "insert into t values (1) returning txid_current()::text as xid",
        );
        const [{ last }] = await tx.query<{ last: string }>(
          "insert into t values (2) returning txid_current()::text as last",
          [],
          { last: true, prepare: true },
        );
        // Nothing may follow the last statement.
        await expect(tx.query("select 1")).rejects.toThrow(/after the transaction's last/);
        await expect(tx.exec("select 1")).rejects.toThrow(/after the transaction's last/);
        return { xid, last };
      });
      expect(ids.last).toBe(ids.xid);
      expect(await fresh.db.query("select n from t order by n")).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await fresh.drop();
    }
  });

  it(
    "fails, never hangs, when the server ends its connection mid-transaction; the pool serves on",
    async () => {
      const fresh = await freshDatabase("postgres");
      // A transaction still unsettled this long after its connection ended is taken as hung.
      const settled = <T>(work: Promise<T>) => withStorageDeadline(work, 5_000);
      try {
        await fresh.db.exec("create table t (n int primary key)");
        // More lost connections than the pool has (10): a hung one would keep its connection.
        for (let i = 0; i < 12; i++) {
          const outcome = fresh.db.transaction(async (tx) => {
            await tx.query("insert into t values ($1)", [i]);
            const [{ pid }] = await tx.query<{ pid: number }>("select pg_backend_pid() as pid");
            await fresh.db.query("select pg_terminate_backend($1)", [pid]);
            // Sent before or after the client sees the socket close: it must fail either way.
            await new Promise((resolve) => setTimeout(resolve, i % 2 === 0 ? 0 : 50));
            await tx.query("insert into t values ($1)", [100 + i]);
          });
          // Whichever error the client saw first (the connection closed, reset, terminated).
          const failure = await settled(outcome).then(() => undefined, (error: Error) => error);
          expect(failure).toBeInstanceOf(Error);
          expect(failure).not.toBeInstanceOf(StorageTimeoutError);
        }
        expect(await fresh.db.query("select n from t")).toEqual([]);
        for (let i = 0; i < 12; i++) {
          await settled(fresh.db.transaction((tx) => tx.query("insert into t values ($1)", [i])));
        }
        expect(await fresh.db.query("select count(*)::int as n from t")).toEqual([{ n: 12 }]);
      } finally {
        await fresh.drop();
      }
    },
    120_000,
  );

  it("rolls back everything when the last statement fails, and the connection serves again", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      await fresh.db.exec("create table t (n int primary key)");
      for (let i = 0; i < 12; i++) {
        await expect(fresh.db.transaction(async (tx) => {
          await tx.query("insert into t values (1)");
          await tx.query("insert into t values (1)", [], { last: true });
        })).rejects.toThrow(/duplicate key/);
      }
      expect(await fresh.db.query("select n from t")).toEqual([]);
      await fresh.db.transaction((tx) => tx.query("insert into t values (3)", [], { last: true }));
      expect(await fresh.db.query("select n from t")).toEqual([{ n: 3 }]);
    } finally {
      await fresh.drop();
    }
  });
});
