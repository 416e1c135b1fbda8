import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import {
  type Backfill,
  backfillBatch,
  backfillStates,
  progressOf,
  runBackfills,
} from "./backfill.ts";
import { migrate } from "./migrate.ts";
import { ManualClock } from "../clock.ts";
import { STORAGES } from "../../../test/helpers/env.ts";
import { type FreshDatabase, freshDatabase } from "../../../test/helpers/storage.ts";

const ROWS = 25;

/** Fills t.b from t.a in id order, the rows still empty only. */
function doubling(schema: string, calls = { n: 0 }): Backfill {
  return {
    name: "b_from_a",
    since: 1,
    async count(q) {
      const [row] = await q.query<{ n: number }>(
        `select count(*)::int as n from ${schema}.t where b is null`,
      );
      return row.n;
    },
    async batch(q, cursor, size) {
      calls.n++;
      const picked = await q.query<{ id: number }>(
        `select id from ${schema}.t where id > $1 order by id limit $2`,
        [Number(cursor ?? 0), size],
      );
      if (picked.length === 0) return { rows: 0, next: undefined };
      const last = picked[picked.length - 1].id;
      const filled = await q.query(
        `update ${schema}.t set b = a * 2 where id > $1 and id <= $2 and b is null returning id`,
        [Number(cursor ?? 0), last],
      );
      return { rows: filled.length, next: picked.length < size ? undefined : String(last) };
    },
  };
}

describe.each(STORAGES)("backfills on %s", (kind) => {
  let fresh: FreshDatabase;
  let n = 0;
  const clock = new ManualClock(Date.parse("2026-11-29T03:00:00Z"));
  beforeAll(async () => {
    fresh = await freshDatabase(kind);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  async function table() {
    const schema = `demo_bf${++n}`;
    await migrate(fresh.db, schema, [{
      version: 1,
      name: "t",
      sql: `create table ${schema}.t (id int primary key, a int not null, b int);
        insert into ${schema}.t select i, i from generate_series(1, ${ROWS}) i;`,
    }]);
    return schema;
  }

  it("fills batch by batch, keeping its progress with each batch", async () => {
    const schema = await table();
    const backfill = doubling(schema);
    const first = await backfillBatch(fresh.db, schema, backfill, { size: 10, now: clock.now() });
    expect(first).toMatchObject({ doneRows: 10, totalRows: ROWS, finishedAt: undefined });
    expect(progressOf(first as never)).toBe(0.4);
    clock.advance(1000);
    await backfillBatch(fresh.db, schema, backfill, { size: 10, now: clock.now() });
    const last = await backfillBatch(fresh.db, schema, backfill, { size: 10, now: clock.now() });
    expect(last).toMatchObject({
      doneRows: ROWS,
      totalRows: ROWS,
      startedAt: "2026-11-29T03:00:00.000Z",
      finishedAt: "2026-11-29T03:00:01.000Z",
    });
    expect(progressOf(last as never)).toBe(1);
    const wrong = await fresh.db.query(`select id from ${schema}.t where b is distinct from a * 2`);
    expect(wrong).toEqual([]);
  });

  it("goes on where it stopped, never doing a batch twice", async () => {
    const schema = await table();
    const calls = { n: 0 };
    const backfill = doubling(schema, calls);
    const stop = new AbortController();
    // Stopped during the pause after its first batch (a rollout).
    await runBackfills(fresh.db, schema, [backfill], stop.signal, {
      clock,
      batchSize: 10,
      sleep: () => Promise.resolve(stop.abort()),
    });
    const [stopped] = await backfillStates(fresh.db, schema);
    expect(stopped).toMatchObject({ name: "b_from_a", doneRows: 10, finishedAt: undefined });
    // A new process runs it to the end.
    const waits: number[] = [];
    await runBackfills(fresh.db, schema, [backfill], new AbortController().signal, {
      clock,
      batchSize: 10,
      pauseMs: 5,
      sleep: (ms) => Promise.resolve(void waits.push(ms)),
    });
    const [finished] = await backfillStates(fresh.db, schema);
    expect(finished.doneRows).toBe(ROWS);
    expect(finished.finishedAt).toBeDefined();
    expect(calls.n).toBe(3);
    expect(waits).toEqual([5]);
  });

  it("reports a failed batch and tries it again", async () => {
    const schema = await table();
    const backfill = doubling(schema);
    let failed = false;
    const flaky: Backfill = {
      ...backfill,
      batch(q, cursor, size) {
        if (!failed && cursor !== undefined) {
          failed = true;
          return Promise.reject(new Error("storage away"));
        }
        return backfill.batch(q, cursor, size);
      },
    };
    const errors: string[] = [];
    const waits: number[] = [];
    await runBackfills(fresh.db, schema, [flaky], new AbortController().signal, {
      clock,
      batchSize: 10,
      pauseMs: 1,
      retryMs: 7,
      sleep: (ms) => Promise.resolve(void waits.push(ms)),
      onError: (name, error) => errors.push(`${name}: ${(error as Error).message}`),
    });
    expect(errors).toEqual([`${schema}.b_from_a: storage away`]);
    expect(waits).toContain(7);
    const [state] = await backfillStates(fresh.db, schema);
    expect(state).toMatchObject({ doneRows: ROWS });
    expect(state.finishedAt).toBeDefined();
  });

  it("waits for the migration that makes its shape", async () => {
    const schema = await table();
    const stop = new AbortController();
    let looked = 0;
    await runBackfills(fresh.db, schema, [{ ...doubling(schema), since: 2 }], stop.signal, {
      clock,
      sleep: () => Promise.resolve(void (++looked === 2 && stop.abort())),
    });
    expect(looked).toBe(2);
    expect(await backfillStates(fresh.db, schema)).toEqual([]);
  });

  if (kind === "postgres") {
    it("leaves a backfill another replica works on to it", async () => {
      const schema = await table();
      const backfill = doubling(schema);
      await backfillBatch(fresh.db, schema, backfill, { size: 10, now: clock.now() });
      const other = postgres(fresh.url!, { max: 1, onnotice: () => {} });
      try {
        const reserved = await other.reserve();
        await reserved.unsafe("begin");
        await reserved.unsafe(`select 1 from ${schema}.backfills for update`);
        const busy = await backfillBatch(fresh.db, schema, backfill, {
          size: 10,
          now: clock.now(),
        });
        expect(busy).toBe("busy");
        await reserved.unsafe("commit");
        reserved.release();
      } finally {
        await other.end();
      }
      const next = await backfillBatch(fresh.db, schema, backfill, { size: 10, now: clock.now() });
      expect(next).toMatchObject({ doneRows: 20 });
    });
  }
});
