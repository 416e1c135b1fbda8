import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "./admin.ts";
import type { CommandIo } from "./command_io.ts";
import { SCHEMAS } from "./schemas.ts";
import { serviceContext } from "../lib/service_runtime.ts";
import type { Platform } from "../lib/platform.ts";
import { createLogger } from "../lib/log.ts";
import { migrate } from "../lib/db/migrate.ts";
import type { Backfill } from "../lib/db/backfill.ts";
import { DATABASE_URL } from "../../test/helpers/env.ts";
import { migrateStatus } from "./migrate_status.ts";
import type { AdminClients } from "./admin_clients.ts";
import type { Config } from "../lib/config.ts";
import { type FreshDatabase, freshDatabase } from "../../test/helpers/storage.ts";

/** Runs the admin command line in this process; its exit code and what it printed. */
async function admin(argv: string[], env: Record<string, string>) {
  let stdout = "";
  let stderr = "";
  const io: CommandIo = {
    env,
    cwd: Deno.cwd(),
    stdout: { write: (t) => Promise.resolve(void (stdout += t)) },
    stderr: { write: (t) => Promise.resolve(void (stderr += t)) },
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

const ingest = SCHEMAS.find((s) => s.schema === "ingest")!;

describe.runIf(DATABASE_URL)("admin migrate status --database", () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase("postgres");
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("prints each schema's versions and its backfills' progress", async () => {
    const env = { DATABASE_URL: fresh.url! };
    const before = await admin(["migrate", "status", "--database"], env);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout).ingest).toEqual({
      schema: "ingest",
      current: 0,
      latest: ingest.migrations.length,
      pending: ingest.migrations.length,
      backfills: [],
    });
    expect((await admin(["migrate", "--database"], env)).code).toBe(0);
    await fresh.db.query(
      `insert into ingest.backfills (name, cursor, done_rows, total_rows, started_at, updated_at)
       values ('visits_zone', '10', 10, 40, '2026-11-29T03:00:00Z', '2026-11-29T03:01:00Z')`,
    );
    const after = JSON.parse((await admin(["migrate", "status", "--database"], env)).stdout);
    expect(after.auth).toMatchObject({ current: after.auth.latest, pending: 0, backfills: [] });
    expect(after.ingest).toMatchObject({ pending: 0 });
    expect(after.ingest.backfills).toEqual([{
      name: "visits_zone",
      doneRows: 10,
      totalRows: 40,
      progress: 0.25,
      startedAt: "2026-11-29T03:00:00.000Z",
      updatedAt: "2026-11-29T03:01:00.000Z",
      finishedAt: null,
    }]);
  });

  it("refuses other arguments", async () => {
    const wrong = await admin(["migrate", "status", "--all"], { DATABASE_URL: fresh.url! });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^migrate: migrate status takes no arguments, or --database/);
  });
});

describe("a service's migration status", () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase("pglite");
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("gives the versions and every declared backfill, started or not", async () => {
    const migrations = [{ version: 1, name: "t", sql: "create table demo_st.t (id int);" }];
    const declared = (name: string): Backfill => ({
      name,
      since: 1,
      count: () => Promise.resolve(0),
      batch: () => Promise.resolve({ rows: 0, next: undefined }),
    });
    const platform = {
      db: fresh.db,
      log: createLogger("error", {}, () => {}),
      config: { pools: { reportTimeoutMs: 1000 } },
    } as unknown as Platform;
    const context = serviceContext(platform, {
      name: "demo",
      schema: "demo_st",
      migrations,
      backfills: [declared("started"), declared("waiting")],
    });
    await migrate(fresh.db, "demo_st", migrations);
    await fresh.db.query(
      `insert into demo_st.backfills (name, done_rows, total_rows, finished_at)
       values ('started', 5, 5, '2026-11-29T03:00:00Z')`,
    );
    const status = await context.migrationStatus();
    expect(status).toMatchObject({ schema: "demo_st", currentVersion: 1, latestVersion: 1 });
    expect(status.backfills).toEqual([
      {
        name: "started",
        doneRows: 5n,
        totalRows: 5n,
        progress: 1,
        startedAt: "",
        updatedAt: "",
        finishedAt: "2026-11-29T03:00:00.000Z",
      },
      {
        name: "waiting",
        doneRows: 0n,
        progress: 0,
        startedAt: "",
        updatedAt: "",
        finishedAt: "",
      },
    ]);
  });
});

describe("admin migrate status through the services", () => {
  it("prints each service's answer, pending migrations counted", async () => {
    const answer = (schema: string, current: number, latest: number, backfills = []) => ({
      migrationStatus: () =>
        Promise.resolve({ schema, currentVersion: current, latestVersion: latest, backfills }),
    });
    const clients = {
      auth: answer("auth", 2, 2),
      content: answer("content", 2, 2),
      ingest: {
        migrationStatus: () =>
          Promise.resolve({
            schema: "ingest",
            currentVersion: 19,
            latestVersion: 21,
            backfills: [{
              name: "page_views_page",
              doneRows: 30n,
              totalRows: 120n,
              progress: 0.25,
              startedAt: "2026-11-29T03:00:00.000Z",
              updatedAt: "2026-11-29T03:01:00.000Z",
              finishedAt: "",
            }, {
              name: "events_page",
              doneRows: 0n,
              progress: 0,
              startedAt: "",
              updatedAt: "",
              finishedAt: "",
            }],
          }),
      },
    } as unknown as AdminClients;
    const status = await migrateStatus(clients, [], {} as Config);
    expect(status.auth).toEqual({
      schema: "auth",
      current: 2,
      latest: 2,
      pending: 0,
      backfills: [],
    });
    expect(status.ingest).toMatchObject({ current: 19, latest: 21, pending: 2 });
    expect(status.ingest.backfills).toEqual([
      {
        name: "page_views_page",
        doneRows: 30,
        totalRows: 120,
        progress: 0.25,
        startedAt: "2026-11-29T03:00:00.000Z",
        updatedAt: "2026-11-29T03:01:00.000Z",
        finishedAt: null,
      },
      {
        name: "events_page",
        doneRows: 0,
        totalRows: null,
        progress: 0,
        startedAt: null,
        updatedAt: null,
        finishedAt: null,
      },
    ]);
  });
});
