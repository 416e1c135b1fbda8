/** The README's promise, as a newcomer meets it: `deno task start` and `deno task admin`. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTask, startTask } from "./helpers/process.ts";
import { runAdmin } from "./helpers/admin.ts";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import { STORAGES } from "./helpers/env.ts";
import { demoKeys } from "../services/cli/system.ts";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { freePort } from "./helpers/ports.ts";
import { authMigrations } from "../services/auth/migrations/mod.ts";
import { contentMigrations } from "../services/content/migrations/mod.ts";
import { ingestMigrations } from "../services/ingest/migrations/mod.ts";

const FIXTURE = "test/fixtures/contract-example.json";

const runAdminTask = (args: string[], env: Record<string, string>) =>
  runTask(["admin", ...args], env);

describe.each(STORAGES)("deno task start on %s", (storage) => {
  it(
    "loads the demo site on empty storage, serves it, stops cleanly and keeps its data",
    async () => {
      const dataDir = await Deno.makeTempDir({ prefix: "crm-start-" });
      const pg = storage === "postgres" ? await freshPostgresUrl() : undefined;
      // Storage is chosen here, never inherited: an empty store is the point.
      const env = { CRM_DATA_DIR: dataDir, DATABASE_URL: pg?.url ?? "", REDIS_URL: "" };
      try {
        const first = await startTask([], env);
        const siteKey = /site key:\s+(pk_[0-9a-f]{32})/.exec(first.banner)?.[1];
        expect(siteKey).toBeDefined();
        expect(first.banner).toMatch(/secret key:\s+sk_[0-9a-f]{48}/);
        expect(first.banner).toContain(`${first.url}/content/v1/pages/home`);
        expect(first.banner).toContain(`demo page:   ${first.url}/demo/`);
        const { reportKey } = await demoKeys();
        expect(first.banner).toContain(
          `dashboard:   ${first.url}/dashboard/ (report key ${reportKey})`,
        );
        const health = await fetch(`${first.url}/healthz`);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({
          status: "ok",
          services: { auth: "SERVING", content: "SERVING", ingest: "SERVING" },
        });
        expect((await fetch(`${first.url}/livez`)).status).toBe(200);
        const page = await fetch(`${first.url}/content/v1/pages/home`, {
          headers: { "x-crm-key": siteKey! },
        });
        expect(page.status).toBe(200);
        const body = await page.json();
        expect(Object.keys(body.content).length).toBeGreaterThan(0);
        // The write path as started (on Postgres: ingest-service on its thread,
        // reached by the gateway through a MessagePort): stored, a duplicate, a refusal.
        const { secretKey } = await demoKeys();
        const event = (json: Record<string, unknown>) =>
          fetch(`${first.url}/marketing/event`, {
            method: "POST",
            headers: { "x-event-key": secretKey, "content-type": "application/json" },
            body: JSON.stringify(json),
          }).then(async (r) => [r.status, await r.json()]);
        const purchase = {
          name: "purchase",
          event_id: "start-1",
          value: 1299,
          params: { gift: true },
        };
        expect(await event(purchase)).toEqual([200, { ok: true, duplicate: false }]);
        expect(await event(purchase)).toEqual([200, { ok: true, duplicate: true }]);
        expect(await event({ name: "never_declared" })).toEqual([
          400,
          { message: "unknown_event", name: "never_declared" },
        ]);
        expect(await first.stop()).toBe(0);

        const second = await startTask([], env);
        expect(second.banner).not.toContain("demo site");
        const again = await fetch(`${second.url}/content/v1/pages/home`, {
          headers: { "x-crm-key": siteKey! },
        });
        expect(await again.json()).toEqual(body);
        expect(await second.stop()).toBe(0);
      } finally {
        await Deno.remove(dataDir, { recursive: true });
        await pg?.drop();
      }
      // Two starts of the whole system, each building the browser files and loading the demo site.
    },
    180_000,
  );
});

describe("deno task start", () => {
  it("imports --seed FILE instead of the demo, then a year of history into it", async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "crm-seed-" });
    try {
      // Ports chosen here, so `deno task admin` in another process can reach the services.
      const services = {
        AUTH_URL: `http://127.0.0.1:${freePort()}`,
        CONTENT_URL: `http://127.0.0.1:${freePort()}`,
        INGEST_URL: `http://127.0.0.1:${freePort()}`,
      };
      const started = await startTask(["--seed", FIXTURE], {
        CRM_DATA_DIR: dataDir,
        DATABASE_URL: "",
        REDIS_URL: "",
        ...services,
      });
      expect(started.banner).toContain(`seeded site "demo"`);
      const block = await fetch(`${started.url}/content/v1/blocks/title?lang=de`, {
        headers: { "x-crm-key": "pk_0123456789abcdef0123456789abcdef" },
      });
      expect((await block.json()).content).toEqual({ de: "Hallo" });
      // Seven page views dated 1 to 366 days ago, no live row before them.
      const ago = [1, 30, 61, 120, 200, 300, 366];
      const history = `${dataDir}/history.ndjson`;
      await Deno.writeTextFile(
        history,
        ago.map((days) =>
          JSON.stringify({
            kind: "pageview",
            url: `https://demo.example/d${days}`,
            visitorId: `v${days}`,
            receivedAt: new Date(Date.now() - days * 86_400_000).toISOString(),
          })
        ).join("\n"),
      );
      const imported = await runAdminTask(["history", "import", "demo", history], services);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toEqual({
        pageviews: 7,
        events: 0,
        leads: 0,
        skipped: 0,
      });
      const exported = await runAdminTask(["pageviews", "export", "demo"], services);
      expect(exported.stdout.trim().split("\n").map((l) => JSON.parse(l).url)).toEqual(
        ago.toReversed().map((days) => `https://demo.example/d${days}`),
      );
      expect(await started.stop()).toBe(0);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  });

  it("refuses a faulty seed with the JSON path, exit code 1", async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "crm-bad-" });
    const bad = `${dataDir}/bad.json`;
    await Deno.writeTextFile(bad, JSON.stringify({ site: { id: "x", languages: ["en"] } }));
    try {
      // Its own PGlite store: the shared DATABASE_URL is migrated by tests running beside it.
      const env = { CRM_DATA_DIR: `${dataDir}/store`, DATABASE_URL: "", REDIS_URL: "" };
      await expect(startTask(["--seed", bad], env)).rejects
        .toThrow(
          /invalid manifest at \$\.site\.id/,
        );
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  });
});

describe("deno task admin", () => {
  let sys: TestSystem;
  let env: Record<string, string>;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { ADMIN_TOKEN: "t0ken" } });
    env = {
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
      INGEST_URL: sys.config.ingestUrl,
      ADMIN_TOKEN: "t0ken",
    };
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("imports the contract example twice with the same export", async () => {
    const first = await runAdmin(["import", FIXTURE], env);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ site: "demo", changed: true });
    const exported = await runAdmin(["export-site", "demo"], env);
    const second = await runAdmin(["import", FIXTURE], env);
    expect(JSON.parse(second.stdout)).toMatchObject({ site: "demo", changed: false });
    const exportedAgain = await runAdmin(["export-site", "demo"], env);
    expect(exportedAgain.stdout).toBe(exported.stdout);
    const fixture = await readFixture("contract-example.json") as { site: unknown };
    expect(JSON.parse(exported.stdout).site).toEqual(fixture.site);
  });

  it("creates, uses and revokes a key", async () => {
    const created = await runAdmin(["key", "create", "demo", "--kind", "site"], env);
    expect(created.code).toBe(0);
    const { key } = JSON.parse(created.stdout);
    expect(key).toMatch(/^pk_[0-9a-f]{32}$/);
    expect((await sys.get("/content/v1/langs", { headers: { "x-crm-key": key } })).status).toBe(
      200,
    );
    const revoked = await runAdmin(["key", "revoke", key], env);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ siteId: "demo", alreadyRevoked: false });
    const after = await sys.get("/content/v1/langs", { headers: { "x-crm-key": key } });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ message: "invalid_key" });
  });

  // Each run twice: the command's own answer in this process, and the same
  // through `deno task admin` in a child (the task's wiring: exit code, stderr, stdout).
  for (const [how, run] of [["in process", runAdmin], ["deno task", runAdminTask]] as const) {
    it(`fails with one line and a non-zero exit (${how})`, async () => {
      const missing = await run(["export-site", "nosuch"], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim().split("\n")).toHaveLength(1);
      expect(missing.stderr).toContain("site_not_found");
      // Every usage error in this process; one of them is enough for the task's wiring.
      const usages = how === "deno task" ? [["frobnicate"]] : [
        ["frobnicate"],
        [],
        ["key", "rotate"],
        ["export-site"],
      ];
      for (const args of usages) {
        const usage = await run(args, env);
        expect(usage.code).toBe(2);
        expect(usage.stderr.trim().split("\n")).toHaveLength(1);
      }
      const help = await run(["help"], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("events export SITE_ID");
    });
  }

  it("needs ADMIN_TOKEN when the services have one", async () => {
    const refused = await runAdmin(["export-site", "demo"], {
      ...env,
      ADMIN_TOKEN: "wrong",
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/admin token/);
  });

  it("runs migrate as a no-op on a migrated system", async () => {
    const result = await runAdmin(["migrate"], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      auth: { applied: [], current: authMigrations.length },
      content: { applied: [], current: contentMigrations.length },
      ingest: { applied: [], current: ingestMigrations.length },
    });
  });
});
