/**
 * Acknowledged means committed on embedded storage too: `deno task start`
 * (PGlite under CRM_DATA_DIR) takes a load of server events with ids and is
 * killed with SIGKILL in the middle of it. After a restart on the same data
 * folder every event answered 200 is there, and sending every event again
 * stores none twice.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type StartedProcess, startTask } from "./helpers/process.ts";
import { analyticsManifest, postEvent } from "./helpers/marketing.ts";
import { eventLoad } from "./helpers/load.ts";
import { freePort } from "./helpers/ports.ts";
import type { TestSystem } from "./helpers/system.ts";
import { runAdmin } from "./helpers/admin.ts";

describe("the embedded system killed mid-load", () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "crm-crash-" });
  const env: Record<string, string> = {
    CRM_DATA_DIR: dataDir,
    AUTH_URL: `http://127.0.0.1:${freePort()}`,
    CONTENT_URL: `http://127.0.0.1:${freePort()}`,
    INGEST_URL: `http://127.0.0.1:${freePort()}`,
    RATE_LIMIT_MARKETING_PER_IP: "1000000",
    RATE_LIMIT_MARKETING_PER_SITE: "1000000",
    // The embedded system never uses servers, whatever the suite runs against.
    DATABASE_URL: "",
    REDIS_URL: "",
  };
  let running: StartedProcess | undefined;

  afterAll(async () => {
    try {
      running?.process.kill("SIGKILL");
      await running?.process.status;
    } catch { /* already gone */ }
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });

  const exportedIds = async (run: string) => {
    const result = await runAdmin(["events", "export", "demo"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return result.stdout.split("\n").filter((l) => l !== "")
      .map((l) => JSON.parse(l).eventId as string)
      .filter((id) => id?.startsWith(run));
  };

  it("loses no acknowledged event and stores none twice after retries", async () => {
    const seed = `${dataDir}/seed.json`;
    await Deno.writeTextFile(seed, JSON.stringify(await analyticsManifest()));
    running = await startTask(["--seed", seed], env, { direct: true });
    const target = { url: running.url } as TestSystem;

    const run = `crash-${Date.now().toString(36)}`;
    const load = eventLoad(target, run);
    const { sent, acked } = load;
    await new Promise((r) => setTimeout(r, 2000));
    const ackedBeforeKill = acked.length;
    running.process.kill("SIGKILL");
    await running.process.status;
    await load.stop();
    console.log(`embedded kill: ${acked.length} of ${sent.length} events acknowledged`);
    expect(ackedBeforeKill).toBeGreaterThan(50);
    expect(acked.length).toBeLessThan(sent.length); // the kill did cut requests off

    running = await startTask([], env, { direct: true });
    const storedIds = new Set(await exportedIds(run));
    expect(acked.filter((id) => !storedIds.has(id))).toEqual([]);

    const retry = { url: running.url } as TestSystem;
    for (let i = 0; i < sent.length; i += 64) {
      const answers = await Promise.all(
        sent.slice(i, i + 64).map(async (id) => {
          const res = await postEvent(retry, { name: "note", id });
          expect(res.status).toBe(200);
          return { id, ...(await res.json()) };
        }),
      );
      for (const answer of answers) {
        expect(answer.ok).toBe(true);
        if (storedIds.has(answer.id)) expect(answer.duplicate).toBe(true);
      }
    }
    const after = await exportedIds(run);
    expect(after.length).toBe(sent.length);
    expect(new Set(after).size).toBe(sent.length);
    expect(await running.stop()).toBe(0);
    running = undefined;
  }, 180_000);
});
