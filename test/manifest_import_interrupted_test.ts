/**
 * A manifest import that stops halfway. A service goes down between two
 * steps of `admin import` (before its dry run, or before its apply), on
 * every storage; and, on Postgres, content-service running as its own
 * process is killed with SIGKILL inside its apply, after its first writes.
 * Every service must then hold its whole old part of the site or its whole
 * new one (the new one exactly where its apply finished before the stop),
 * and running the same import again must complete it, reporting only what it
 * still changed; a third run changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { DATABASE_URL, STORAGES } from "./helpers/env.ts";
import { freePort } from "./helpers/ports.ts";
import { spawnService } from "./helpers/process.ts";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  ImportIncompleteError,
  importManifest,
  type ImportReport,
} from "../services/cli/site_manifest.ts";
import {
  type AdminClients,
  SITE_SERVICES,
  type SiteAdminClients,
  type SiteService,
} from "../services/cli/admin_clients.ts";
import type { ListenOptions, RunningService } from "../services/lib/service_runtime.ts";
import type { Platform } from "../services/lib/platform.ts";
import { serviceClient } from "../services/lib/rpc/client.ts";
import { SiteAdminService } from "../services/lib/gen/crm/admin/v1/site_admin_pb.ts";
import { startAuthService } from "../services/auth/main.ts";
import { startContentService } from "../services/content/main.ts";
import { startIngestService } from "../services/ingest/main.ts";

// deno-lint-ignore no-explicit-any
type Manifest = Record<string, any>;

const START: Record<SiteService, (p: Platform, l: ListenOptions) => Promise<RunningService>> = {
  auth: startAuthService,
  content: startContentService,
  ingest: startIngestService,
};

type Step = "dry run" | "apply";

/**
 * The admin clients, with `stop` run just before the import reaches `service`
 * at `step`: the service goes down after the steps before it have answered.
 */
function stoppingBefore(
  clients: AdminClients,
  target: SiteService,
  step: Step,
  stop: () => Promise<void>,
): SiteAdminClients {
  const wrap = (service: SiteService) => ({
    ...clients[service],
    importSite: (async (request, options) => {
      if (service === target && (request.dryRun === true) === (step === "dry run")) await stop();
      return await clients[service].importSite(request, options);
    }) as AdminClients[SiteService]["importSite"],
  });
  return { auth: wrap("auth"), content: wrap("content"), ingest: wrap("ingest") };
}

/** The contract's example, and a change of it for every service. */
async function manifests(): Promise<{ before: Manifest; after: Manifest }> {
  const before = await readFixture("contract-example.json") as Manifest;
  const after = structuredClone(before);
  // auth: the site's name and domains.
  after.site.name = "Demo site, renamed";
  after.site.domains = [...before.site.domains, "new.demo.example"];
  // content: blog settings (the site row, written first), a block, then a post (written last).
  after.blog.pageSize = 5;
  after.pages[0].sections[0].blocks[0].content = { en: "Welcome", de: "Willkommen" };
  after.posts[0].title = { en: "Hello again" };
  // ingest: the time zone and the event types.
  after.site.timeZone = "America/New_York";
  after.eventTypes.push({ name: "refund", params: [] });
  return { before, after };
}

/** Each service's part of the site, as its ExportSite answers it. */
async function partsOf(clients: SiteAdminClients): Promise<Record<SiteService, unknown>> {
  const out = {} as Record<SiteService, unknown>;
  for (const service of SITE_SERVICES) {
    const { manifestJson } = await clients[service].exportSite({ siteId: "demo" });
    out[service] = JSON.parse(manifestJson);
  }
  return out;
}

const NOTHING_CHANGED = {
  site: "demo",
  changed: false,
  changes: { auth: {}, content: {}, ingest: {} },
};

describe.each(STORAGES)("a manifest import interrupted on %s", (storage) => {
  let sys: TestSystem;
  let before: Manifest;
  let after: Manifest;

  beforeAll(async () => {
    ({ before, after } = await manifests());
    sys = await startTestSystem({ storage, seed: before });
  });
  afterAll(async () => {
    await sys?.close();
  });

  const importing = (manifest: Manifest, clients: SiteAdminClients = sys.system.admin) =>
    importManifest(clients, JSON.stringify(manifest));

  const parts = () => partsOf(sys.system.admin);

  const running = (service: SiteService) => {
    const index = sys.system.services.findIndex((s) => s.name === service);
    return { index, service: sys.system.services[index] };
  };

  /** Brings a stopped service back on its port, on the same storage. */
  async function restart(service: SiteService) {
    const { index, service: stopped } = running(service);
    sys.system.services[index] = await START[service](sys.system.platform, {
      host: "127.0.0.1",
      port: stopped.port,
      migrateOnStart: true,
    });
  }

  const heroTitle = async () => {
    const res = await sys.get("/content/v1/blocks/title?section=hero", {
      headers: { "x-crm-key": before.siteKeys[0] },
    });
    return (await res.json()).content;
  };

  for (const step of ["dry run", "apply"] as const) {
    for (const [position, target] of SITE_SERVICES.entries()) {
      it(`${target} down before its ${step}`, async () => {
        // The old state, the new one, and what an uninterrupted import changes between them.
        await importing(before);
        const old = await parts();
        const straight: ImportReport = await importing(after);
        const fresh = await parts();
        await importing(before);
        expect(await parts()).toEqual(old);
        expect(fresh).not.toEqual(old);
        for (const service of SITE_SERVICES) expect(fresh[service]).not.toEqual(old[service]);

        const stop = () => running(target).service.close();
        const error = await importing(after, stoppingBefore(sys.system.admin, target, step, stop))
          .then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        const applied = step === "apply" ? SITE_SERVICES.slice(0, position) : [];
        if (applied.length > 0) {
          expect(error).toBeInstanceOf(ImportIncompleteError);
          expect((error as ImportIncompleteError).applied).toEqual(applied);
          expect((error as ImportIncompleteError).pending).toEqual(SITE_SERVICES.slice(position));
          expect((error as Error).message).toContain("run the same import again");
        } else {
          expect(error).not.toBeInstanceOf(ImportIncompleteError);
        }

        await restart(target);
        const left = await parts();
        for (const service of SITE_SERVICES) {
          expect(left[service]).toEqual(applied.includes(service) ? fresh[service] : old[service]);
        }

        const rerun = await importing(after);
        expect(rerun.changed).toBe(true);
        for (const service of SITE_SERVICES) {
          expect(rerun.changes[service]).toEqual(
            applied.includes(service) ? {} : straight.changes[service],
          );
        }
        expect(await parts()).toEqual(fresh);
        expect(await heroTitle()).toEqual({ en: "Welcome", de: "Willkommen" });
        expect(await importing(after)).toEqual(NOTHING_CHANGED);
      });
    }
  }
});

describe.runIf(DATABASE_URL)("content-service killed inside its apply", () => {
  let sys: TestSystem;
  let child: Deno.ChildProcess | undefined;
  let locker: postgres.Sql | undefined;

  afterAll(async () => {
    try {
      child?.kill("SIGKILL");
    } catch { /* already gone */ }
    await locker?.end();
    await sys?.close();
  });

  it("rolls back its first writes; the same import again completes", async () => {
    const { before, after } = await manifests();
    sys = await startTestSystem({ storage: "postgres", seed: before });
    const databaseUrl = sys.config.databaseUrl!;
    const inProcess = sys.system.admin;
    const straight = await importManifest(inProcess, JSON.stringify(after));
    const fresh = await partsOf(inProcess);
    await importManifest(inProcess, JSON.stringify(before));
    const old = await partsOf(inProcess);

    // content-service as its own process; auth and ingest stay in this one.
    const port = freePort();
    const spawnContent = () =>
      spawnService("content", { DATABASE_URL: databaseUrl, GRPC_PORT: String(port) });
    child = await spawnContent();
    const clients: SiteAdminClients = {
      ...inProcess,
      content: serviceClient(SiteAdminService, `http://127.0.0.1:${port}`, { timeoutMs: 30_000 }),
    };

    // Hold the post's row: content's apply waits for it inside its transaction, after it has
    // written the blog settings and the block.
    locker = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    const held = await locker.reserve();
    await held`begin`;
    await held`select 1 from content.posts where site_id = 'demo' for update`;
    const run = importManifest(clients, JSON.stringify(after)).then(() => undefined, (e) => e);
    for (let i = 0;; i++) {
      const [{ waiting }] = await locker<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`;
      if (waiting > 0) break;
      if (i > 200) throw new Error("content's apply never reached the held row");
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await child.status;
    await held`rollback`;
    held.release();

    const error = await run;
    expect(error).toBeInstanceOf(ImportIncompleteError);
    expect((error as ImportIncompleteError).applied).toEqual(["auth"]);
    expect((error as ImportIncompleteError).pending).toEqual(["content", "ingest"]);
    const left = await partsOf(inProcess);
    expect(left.auth).toEqual(fresh.auth);
    expect(left.content).toEqual(old.content);
    expect(left.ingest).toEqual(old.ingest);

    child = await spawnContent();
    const rerun = await importManifest(clients, JSON.stringify(after));
    expect(rerun).toEqual({
      site: "demo",
      changed: true,
      changes: { auth: {}, content: straight.changes.content, ingest: straight.changes.ingest },
    });
    expect(await partsOf(inProcess)).toEqual(fresh);
    expect(await importManifest(clients, JSON.stringify(after))).toEqual(NOTHING_CHANGED);
    child.kill("SIGTERM");
    await child.status;
    child = undefined;
  }, 120_000);
});
