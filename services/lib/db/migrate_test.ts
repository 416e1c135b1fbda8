import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import {
  type LockRetry,
  migrate,
  type Migration,
  MigrationLockError,
  schemaVersion,
  withLockRetries,
} from "./migrate.ts";
import { DATABASE_URL, STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";

const lockTimeout = () =>
  Object.assign(new Error("canceling statement due to lock timeout"), {
    code: "55P03",
  });

/** A sleeper that only records what it was asked to wait. */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: (ms: number) => (waits.push(ms), Promise.resolve()) };
}

describe("withLockRetries", () => {
  it("tries again after doubling pauses while a lock is not granted, then succeeds", async () => {
    const { waits, sleep } = recordingSleep();
    const retries: LockRetry[] = [];
    let calls = 0;
    const result = await withLockRetries("m", () => {
      calls++;
      return calls < 4 ? Promise.reject(lockTimeout()) : Promise.resolve("done");
    }, {
      sleep,
      attempts: 5,
      firstBackoffMs: 100,
      lastBackoffMs: 250,
      onRetry: (r) => retries.push(r),
    });
    expect(result).toBe("done");
    expect(calls).toBe(4);
    expect(waits).toEqual([100, 200, 250]);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3]);
  });

  it("gives up after its tries with an error that says why", async () => {
    const { waits, sleep } = recordingSleep();
    let calls = 0;
    const error = await withLockRetries("ingest migration 9 (x)", () => {
      calls++;
      return Promise.reject(lockTimeout());
    }, { sleep, attempts: 3, lockTimeoutMs: 1500, firstBackoffMs: 10 }).catch((e) => e);
    expect(error).toBeInstanceOf(MigrationLockError);
    expect(error.message).toMatch(/^ingest migration 9 \(x\): .* within 1500 ms, 3 times/);
    expect(error.cause.code).toBe("55P03");
    expect(calls).toBe(3);
    expect(waits).toEqual([10, 20]);
  });

  it("retries a deadlock but not any other failure", async () => {
    const { waits, sleep } = recordingSleep();
    let calls = 0;
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    await withLockRetries("m", () => {
      calls++;
      return calls === 1 ? Promise.reject(deadlock) : Promise.resolve();
    }, { sleep });
    expect(calls).toBe(2);
    const syntax = Object.assign(new Error("syntax error"), { code: "42601" });
    await expect(withLockRetries("m", () => Promise.reject(syntax), { sleep })).rejects.toBe(
      syntax,
    );
    expect(waits).toHaveLength(1);
  });
});

const things = (schema: string): Migration[] => [
  { version: 1, name: "things", sql: `create table ${schema}.things (id int primary key);` },
  { version: 2, name: "note", sql: `alter table ${schema}.things add column note text;` },
];

describe.each(STORAGES)("migrations on %s", (kind) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(kind);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("runs each migration in its own transaction: a failure keeps the ones before it", async () => {
    const list: Migration[] = [
      ...things("demo_each").slice(0, 1),
      { version: 2, name: "broken", sql: "alter table demo_each.things add column x int; x;" },
    ];
    await expect(migrate(fresh.db, "demo_each", list)).rejects.toThrow();
    expect(await schemaVersion(fresh.db, "demo_each")).toBe(1);
    // Nothing of the failed one stayed.
    const columns = await fresh.db.query<{ name: string }>(
      `select column_name as name from information_schema.columns
        where table_schema = 'demo_each' and table_name = 'things'`,
    );
    expect(columns.map((c) => c.name)).toEqual(["id"]);
  });

  it("sets the lock timeout for every statement of a migration", async () => {
    const list: Migration[] = [{
      version: 1,
      name: "timeout seen",
      sql: `create table demo_lt.seen as select current_setting('lock_timeout') as value;`,
    }];
    await migrate(fresh.db, "demo_lt", list, { lockTimeoutMs: 1234 });
    const [row] = await fresh.db.query<{ value: string }>("select value from demo_lt.seen");
    expect(row.value).toBe("1234ms");
  });
});

describe.each(STORAGES)("a migration outside a transaction on %s", (kind) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(kind);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  /** Each index of the schema's tables with whether it is valid. */
  const indexes = (schema: string) =>
    fresh.db.query<{ name: string; valid: boolean }>(
      `select c.relname as name, x.indisvalid as valid
         from pg_index x join pg_class c on c.oid = x.indexrelid
         join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and not x.indisprimary order by c.relname`,
      [schema],
    );

  it("builds indexes concurrently, on a partitioned table partition by partition", async () => {
    const list: Migration[] = [
      {
        version: 1,
        name: "tables",
        sql: `create table demo_ci.plain (id int, at timestamptz);
          create table demo_ci.parted (id int, at timestamptz) partition by range (at);
          create table demo_ci.parted_a partition of demo_ci.parted
            for values from ('2026-01-01') to ('2026-02-01');
          create table demo_ci.parted_b partition of demo_ci.parted
            for values from ('2026-02-01') to ('2026-03-01');
          insert into demo_ci.parted values (1, '2026-01-05'), (2, '2026-02-05');
          insert into demo_ci.plain values (1, now());`,
      },
      {
        version: 2,
        name: "indexes",
        transactional: false,
        sql: `create index concurrently if not exists plain_at on demo_ci.plain (at);
          -- on every partition
          create index concurrently if not exists parted_id on demo_ci.parted (id);`,
      },
    ];
    expect(await migrate(fresh.db, "demo_ci", list)).toEqual({ applied: [1, 2], current: 2 });
    const built = await indexes("demo_ci");
    if (kind === "postgres") {
      expect(built).toEqual([
        { name: "parted_a_parted_id", valid: true },
        { name: "parted_b_parted_id", valid: true },
        { name: "parted_id", valid: true },
        { name: "plain_at", valid: true },
      ]);
    } else {
      expect(built.map((i) => i.name)).toContain("plain_at");
      expect(built.map((i) => i.name)).toContain("parted_id");
      expect(built.every((i) => i.valid)).toBe(true);
    }
    // A partition made later has its index too.
    await fresh.db.exec(`create table demo_ci.parted_c partition of demo_ci.parted
      for values from ('2026-03-01') to ('2026-04-01')`);
    const later = await fresh.db.query<{ n: number }>(
      `select count(*)::int as n from pg_indexes where schemaname = 'demo_ci' and tablename = 'parted_c'`,
    );
    expect(later[0].n).toBe(1);
    expect(await migrate(fresh.db, "demo_ci", list)).toEqual({ applied: [], current: 2 });
  });

  if (kind === "postgres") {
    it("builds again an index a failed concurrent build left invalid", async () => {
      const list: Migration[] = [
        {
          version: 1,
          name: "table",
          sql: `create table demo_inv.t (id int); insert into demo_inv.t values (1), (1);`,
        },
        {
          version: 2,
          name: "unique",
          transactional: false,
          sql: "create unique index concurrently if not exists t_id on demo_inv.t (id);",
        },
      ];
      // The duplicate fails the build, which leaves the index behind, invalid.
      await expect(migrate(fresh.db, "demo_inv", list)).rejects.toThrow(/duplicate|unique/i);
      expect(await indexes("demo_inv")).toEqual([{ name: "t_id", valid: false }]);
      expect(await schemaVersion(fresh.db, "demo_inv")).toBe(1);
      await fresh.db.exec(
        "delete from demo_inv.t where ctid <> (select min(ctid) from demo_inv.t)",
      );
      expect(await migrate(fresh.db, "demo_inv", list)).toEqual({ applied: [2], current: 2 });
      expect(await indexes("demo_inv")).toEqual([{ name: "t_id", valid: true }]);
    });

    it("runs no statement of its own in a transaction", async () => {
      const list: Migration[] = [{
        version: 1,
        name: "outside",
        transactional: false,
        sql: `create table demo_out.t (id int);
          create index concurrently if not exists t_id on demo_out.t (id);
          vacuum demo_out.t;`,
      }];
      // VACUUM, like CREATE INDEX CONCURRENTLY, fails in a transaction block.
      expect(await migrate(fresh.db, "demo_out", list)).toEqual({ applied: [1], current: 1 });
      // The session's settings and advisory lock were undone: another migration takes the lock.
      await migrate(fresh.db, "demo_out", [...list, {
        version: 2,
        name: "after",
        sql: "alter table demo_out.t add column x int;",
      }]);
      expect(await schemaVersion(fresh.db, "demo_out")).toBe(2);
    });
  }
});

describe.runIf(DATABASE_URL)("a migration meeting a held lock on Postgres", () => {
  let fresh: FreshDatabase;
  let holder: postgres.Sql;
  let writer: postgres.Sql;
  beforeAll(async () => {
    fresh = await freshDatabase("postgres");
    await migrate(fresh.db, "demo_held", things("demo_held").slice(0, 1));
    holder = postgres(fresh.url!, { max: 1, onnotice: () => {} });
    writer = postgres(fresh.url!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await holder?.end();
    await writer?.end();
    await fresh?.drop();
  });

  /**
   * A transaction of another connection that reads the table and stays open
   * until release() (the previous release's long report, say).
   */
  async function holdTable() {
    const reserved = await holder.reserve();
    await reserved.unsafe("begin");
    await reserved.unsafe("select count(*) from demo_held.things");
    return {
      async release() {
        await reserved.unsafe("commit");
        reserved.release();
      },
    };
  }

  /** Resolves once a statement waits for the table's exclusive lock (the migration's ALTER). */
  async function untilExclusiveWaits() {
    for (;;) {
      const [row] = await writer.unsafe(
        `select count(*)::int as n from pg_locks
          where relation = 'demo_held.things'::regclass and mode = 'AccessExclusiveLock'
            and not granted`,
      );
      if (row.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("fails after its tries, and a write queued behind it goes through meanwhile", async () => {
    const held = await holdTable();
    const order: string[] = [];
    let tries = 0;
    const migrating = migrate(fresh.db, "demo_held", things("demo_held"), {
      lockTimeoutMs: 1500,
      attempts: 3,
      firstBackoffMs: 1,
      onRetry: () => tries++,
    }).catch((e) => e);
    // The old release's pods keep writing: this write queues behind the waiting ALTER.
    await untilExclusiveWaits();
    const write = writer.unsafe("insert into demo_held.things values (1)")
      .then(() => order.push("write done"));
    // Without a lock timeout the migration and the write would wait for the reader for good:
    // the bound below only keeps this test from hanging then (it is no timing assertion).
    const outcome = await Promise.race([
      migrating,
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 30_000)),
    ]);
    order.push("reader released");
    await held.release();
    await write;
    await migrating;
    expect(outcome).toBeInstanceOf(MigrationLockError);
    expect((outcome as Error).message).toMatch(/demo_held migration 2 \(note\): .* 3 times/);
    expect(tries).toBe(2);
    expect(order).toEqual(["write done", "reader released"]);
    expect(await schemaVersion(fresh.db, "demo_held")).toBe(1);
  });

  it("applies the migration on a later try once the lock is free", async () => {
    const held = await holdTable();
    let released: Promise<void> | undefined;
    const result = await migrate(fresh.db, "demo_held", things("demo_held"), {
      lockTimeoutMs: 200,
      attempts: 4,
      firstBackoffMs: 1,
      sleep: () => (released ??= held.release()),
    });
    expect(released).toBeDefined();
    expect(result).toEqual({ applied: [2], current: 2 });
    const [row] = await writer.unsafe("select count(*)::int as n from demo_held.things");
    expect(row.n).toBe(1);
  });
});
