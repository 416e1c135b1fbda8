/**
 * Postgres restarted and away for 30 seconds under a load of events, with
 * Toxiproxy between the services (separate processes) and Postgres. As
 * docs/operations.md ("Faults") promises: what cannot be committed is
 * answered 503 `service_unavailable` with Retry-After, never 200; the
 * services reconnect by themselves; clients retrying by event_id end with
 * every acknowledged event stored exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  answerKey,
  type FaultCluster,
  sendEvent,
  startFaultCluster,
  storedCounts,
} from "../helpers/fault_cluster.ts";
import { retryingLoad } from "../helpers/load.ts";

const OUTAGE_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("Postgres faults", () => {
  let cluster: FaultCluster;

  beforeAll(async () => {
    cluster = await startFaultCluster({ postgresProxy: true });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it(
    "refuses with 503 what it cannot commit, reconnects alone, stores each acked event once",
    async () => {
      const postgres = cluster.proxies.postgres!;
      const refusals: Response[] = [];
      // Events sent and acknowledged while Postgres was away, both inside the
      // window (set after the proxy is disabled, cleared before it is enabled
      // again): none can have committed. The tallies count an answer in the
      // phase it arrives in, so an event committed just before the cut, or
      // sent during the outage and committed once Postgres is back, may be
      // counted under "outage" with a 200 that is right.
      let postgresAway = false;
      const ackedWhileAway: string[] = [];
      const load = retryingLoad(async (eventId) => {
        const sentWhileAway = postgresAway;
        const answer = await sendEvent(cluster.url, eventId);
        if (answer.status === 200 && sentWhileAway && postgresAway) ackedWhileAway.push(eventId);
        if (answer.status !== 200) refusals.push(answer.clone());
        return answerKey(answer);
      }, uniqueId("pg-"));

      load.phase = "before";
      await sleep(2_000);

      // A restart: the server closes every session (as a shutdown does) and
      // refuses connections for a moment.
      load.phase = "restart";
      await postgres.disable();
      await cluster.sql`select pg_terminate_backend(pid) from pg_stat_activity
                       where datname = current_database() and pid <> pg_backend_pid()`;
      await sleep(3_000);
      await postgres.enable();
      await sleep(3_000);

      load.phase = "outage";
      await postgres.disable();
      postgresAway = true;
      await sleep(OUTAGE_MS);
      postgresAway = false;
      await postgres.enable();

      // Back without a restart: a new event is acknowledged within seconds.
      load.phase = "recovery";
      const recovered = performance.now();
      try {
        await expect.poll(async () => {
          const answer = await sendEvent(cluster.url, uniqueId("pg-probe-"));
          await answer.body?.cancel();
          return answer.status;
        }, { timeout: 20_000, interval: 250 }).toBe(200);
      } catch (error) {
        console.log(
          `[fault postgres] no recovery; answers ${JSON.stringify(load.tallies)}; ` +
            `ingest-service wrote: ${cluster.processes.ingest.stderr().slice(-3000)}`,
        );
        throw error;
      }
      const recoveryMs = Math.round(performance.now() - recovered);
      load.phase = "after";
      await sleep(2_000);
      await load.stop();

      const stored = await storedCounts(cluster.sql, load.sent);
      const acked = [...load.acked];
      const lost = acked.filter((id) => !stored.has(id));
      const doubled = [...stored].filter(([, n]) => n > 1).map(([id]) => id);
      const storedNotAcked = [...stored.keys()].filter((id) => !load.acked.has(id));
      console.log(
        `[fault postgres] answers ${JSON.stringify(load.tallies)}; sent ${load.sent.length}, ` +
          `acked ${acked.length}, stored ${stored.size}, lost ${lost.length}, ` +
          `stored twice ${doubled.length}, stored not acked ${storedNotAcked.length}, ` +
          `first 200 ${recoveryMs} ms after Postgres returned, ` +
          `slowest answer by phase (ms) ${JSON.stringify(load.slowest)}`,
      );

      // Every refusal was the documented 503.
      for (const phase of Object.values(load.tallies)) {
        for (const key of Object.keys(phase)) {
          expect(["200", "503 service_unavailable"]).toContain(key);
        }
      }
      expect(load.tallies.outage?.["503 service_unavailable"]).toBeGreaterThan(10);
      expect(ackedWhileAway).toEqual([]);
      for (const refusal of refusals.slice(0, 50)) {
        expect(refusal.headers.get("retry-after")).toBe("1");
        expect(refusal.headers.get("content-type")).toBe("application/json");
      }
      // Every client got its events acknowledged in the end, each stored once.
      expect(acked.length).toBe(load.sent.length);
      expect(lost).toEqual([]);
      expect(doubled).toEqual([]);
      expect(storedNotAcked).toEqual([]);
    },
    120_000,
  );
});
