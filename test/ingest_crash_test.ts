/**
 * Acknowledged means committed: ingest-service runs as its own process (the
 * command `deno task service ingest` runs) behind an in-process gateway, a
 * load of events with ids runs through the gateway, and the service is
 * killed with SIGKILL in the middle of it. Every event answered 200 must be
 * in storage; after a restart, sending every event again stores none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, postEvent } from "./helpers/marketing.ts";
import { eventLoad } from "./helpers/load.ts";
import { freePort } from "./helpers/ports.ts";
import { spawnService } from "./helpers/process.ts";
import { type RunningGateway, startGateway } from "../services/gateway/main.ts";
import { createLogger } from "../services/lib/log.ts";

/** Starts the ingest service alone, as a cluster runs it, and waits for its banner. */
const spawnIngest = (databaseUrl: string, port: number) =>
  spawnService("ingest", { DATABASE_URL: databaseUrl, GRPC_PORT: String(port) });

describe.runIf(DATABASE_URL)("ingest-service killed mid-load", () => {
  let sys: TestSystem;
  let gateway: RunningGateway | undefined;
  let child: Deno.ChildProcess | undefined;
  let databaseUrl: string;

  beforeAll(async () => {
    sys = await startTestSystem({ storage: "postgres", seed: await analyticsManifest() });
    databaseUrl = sys.config.databaseUrl!;
  });
  afterAll(async () => {
    try {
      child?.kill("SIGKILL");
    } catch { /* already gone */ }
    await gateway?.close();
    await sys?.close();
  });

  it("loses no acknowledged event and stores none twice after retries", async () => {
    const port = freePort();
    child = await spawnIngest(databaseUrl, port);
    const ingestUrl = `http://127.0.0.1:${port}`;
    gateway = await startGateway(
      {
        ...sys.system.platform,
        config: { ...sys.system.config, ingestUrl },
        // The failed requests of the kill are expected; keep them out of the test output.
        log: createLogger("error", {}, () => {}),
      },
      { host: "127.0.0.1", port: 0 },
    );
    const target = { url: gateway.url } as TestSystem;
    // The service needs a moment to report SERVING after its schema check.
    for (let i = 0; i < 100; i++) {
      const res = await postEvent(target, { name: "note" });
      await res.body?.cancel();
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const run = uniqueId("crash-");
    const load = eventLoad(target, run);
    const { sent, acked } = load;
    await new Promise((r) => setTimeout(r, 1500));
    const ackedBeforeKill = acked.length;
    child.kill("SIGKILL");
    await child.status;
    await new Promise((r) => setTimeout(r, 500));
    await load.stop();
    expect(ackedBeforeKill).toBeGreaterThan(50);
    expect(acked.length).toBeLessThan(sent.length); // the kill did cut requests off

    const db = sys.system.platform.db!;
    const stored = await db.query<{ event_id: string }>(
      "select event_id from ingest.events where site_id = 'demo' and event_id like $1",
      [`${run}-%`],
    );
    const storedIds = new Set(stored.map((r) => r.event_id));
    const lost = acked.filter((id) => !storedIds.has(id));
    expect(lost).toEqual([]);

    // Restart and retry everything that was sent: acknowledged ones are duplicates.
    child = await spawnIngest(databaseUrl, port);
    let retried = 0;
    for (let i = 0; i < sent.length; i += 64) {
      const chunk = sent.slice(i, i + 64);
      const answers = await Promise.all(chunk.map(async (id) => {
        for (let attempt = 0;; attempt++) {
          const res = await postEvent(target, { name: "note", id });
          if (res.status === 200) return { id, ...(await res.json()) };
          await res.body?.cancel();
          if (attempt > 50) throw new Error(`retry of ${id} kept failing: ${res.status}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }));
      for (const a of answers) {
        expect(a.ok).toBe(true);
        if (storedIds.has(a.id)) expect(a.duplicate).toBe(true);
        retried++;
      }
    }
    expect(retried).toBe(sent.length);
    const [{ total, distinct }] = await db.query<{ total: number; distinct: number }>(
      `select count(*)::int as total, count(distinct event_id)::int as distinct
         from ingest.events where site_id = 'demo' and event_id like $1`,
      [`${run}-%`],
    );
    expect(total).toBe(sent.length);
    expect(distinct).toBe(sent.length);
    child.kill("SIGTERM");
    await child.status;
    child = undefined;
  }, 120_000);
});
