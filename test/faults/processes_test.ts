/**
 * Processes killed and restarted under load, the services as separate
 * processes on Postgres and Redis, clients on the whole HTTP path through the
 * gateway. As docs/operations.md ("Faults") promises:
 * - ingest-service killed with SIGKILL and started again: clients retrying by
 *   event_id end with 0 acknowledged events lost and 0 stored twice;
 * - a rolling restart (SIGTERM) of every service in turn: no 5xx but the
 *   documented 503, no request in flight dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  answerKey,
  type FaultCluster,
  type ProcessName,
  sendEvent,
  SITE_KEY,
  startFaultCluster,
  storedCounts,
} from "../helpers/fault_cluster.ts";
import { type RetryingLoad, retryingLoad } from "../helpers/load.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const READS = ["/content/v1/pages/home?lang=en", "/content/v1/pages/home?lang=de"];

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("processes killed and restarted", () => {
  let cluster: FaultCluster;

  beforeAll(async () => {
    cluster = await startFaultCluster();
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  const events = (run: string, senders = 8) =>
    retryingLoad(async (eventId) => answerKey(await sendEvent(cluster.url, eventId)), run, {
      senders,
    });
  const reads = (run: string) =>
    retryingLoad(
      async (id) => {
        const path = READS[Number(id.slice(id.lastIndexOf("-") + 1)) % READS.length];
        return answerKey(
          await fetch(`${cluster.url}${path}`, { headers: { "x-crm-key": SITE_KEY } }),
        );
      },
      run,
      { senders: 4 },
    );

  /** Every id ever sent, with how often it is stored. */
  async function storedOnce(load: RetryingLoad) {
    const stored = await storedCounts(cluster.sql, load.sent);
    const acked = [...load.acked];
    return {
      acked: acked.length,
      stored: stored.size,
      lost: acked.filter((id) => !stored.has(id)),
      doubled: [...stored].filter(([, n]) => n > 1).map(([id]) => id),
    };
  }

  it(
    "loses no acknowledged event and stores none twice when ingest-service is SIGKILLed",
    async () => {
      const load = events(uniqueId("kill-"), 16);
      load.phase = "before";
      await sleep(2_000);
      load.phase = "killed";
      await cluster.processes.ingest.kill();
      await sleep(1_000);
      load.phase = "restarting";
      await cluster.start("ingest");
      load.phase = "after";
      await sleep(2_000);
      await load.stop();

      const result = await storedOnce(load);
      console.log(
        `[fault ingest SIGKILL] answers ${
          JSON.stringify(load.tallies)
        }; sent ${load.sent.length}, ` +
          `acked ${result.acked}, stored ${result.stored}, lost ${result.lost.length}, ` +
          `stored twice ${result.doubled.length}`,
      );
      for (const phase of Object.values(load.tallies)) {
        for (const key of Object.keys(phase)) {
          expect(["200", "503 service_unavailable"]).toContain(key);
        }
      }
      expect(load.tallies.killed?.["503 service_unavailable"]).toBeGreaterThan(0);
      expect(result.acked).toBe(load.sent.length);
      expect(result.lost).toEqual([]);
      expect(result.doubled).toEqual([]);
      expect(result.stored).toBe(load.sent.length);
    },
    90_000,
  );

  it(
    "restarts every service in turn (SIGTERM) under load with no 5xx but 503 and nothing dropped",
    async () => {
      const run = uniqueId("roll-");
      const eventLoad = events(`${run}-event`, 6);
      const readLoad = reads(`${run}-read`);
      const setPhase = (phase: string) => {
        eventLoad.phase = phase;
        readLoad.phase = phase;
      };
      setPhase("before");
      await sleep(1_000);
      const exitCodes: Partial<Record<ProcessName, number>> = {};
      for (const name of ["auth", "content", "ingest", "gateway"] as const) {
        setPhase(`${name} stopping`);
        exitCodes[name] = await cluster.processes[name].stop();
        setPhase(`${name} away`);
        await cluster.start(name);
        setPhase(`${name} back`);
        await sleep(1_500);
      }
      await Promise.all([eventLoad.stop(), readLoad.stop()]);

      const result = await storedOnce(eventLoad);
      console.log(
        `[fault rolling restart] events ${JSON.stringify(eventLoad.tallies)}; reads ${
          JSON.stringify(readLoad.tallies)
        }; exit codes ${JSON.stringify(exitCodes)}; events sent ${eventLoad.sent.length}, ` +
          `acked ${result.acked}, stored ${result.stored}, lost ${result.lost.length}, ` +
          `stored twice ${result.doubled.length}`,
      );
      expect(exitCodes).toEqual({ auth: 0, content: 0, ingest: 0, gateway: 0 });
      for (const load of [eventLoad, readLoad]) {
        for (const [phase, tally] of Object.entries(load.tallies)) {
          for (const key of Object.keys(tally)) {
            // Only the single gateway's own restart may cost connections: refused once
            // it stopped listening, or reset when it stopped listening while the kernel
            // still held them unaccepted (the client had sent, the gateway never read
            // it). Either way the client sends again, and every event is still stored
            // once (below); requests the gateway took are answered.
            const allowed = ["200", "503 service_unavailable"];
            if (phase.startsWith("gateway")) {
              allowed.push("network error: refused", "network error: dropped");
            }
            expect(allowed, `${phase}: ${key}`).toContain(key);
          }
        }
      }
      expect(result.acked).toBe(eventLoad.sent.length);
      expect(result.lost).toEqual([]);
      expect(result.doubled).toEqual([]);
    },
    120_000,
  );
});
