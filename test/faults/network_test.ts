/**
 * A slow, sliced and stalled network between the gateway and the services:
 * Toxiproxy in front of each service as the gateway sees it (the services as
 * separate processes on Postgres and Redis). As docs/operations.md
 * ("Faults") promises: answers are unchanged, only slower or cut into small
 * packets; a call that gets no answer ends at its deadline with a JSON 5xx of
 * the docs; no request waits past its deadline plus a little.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  answerKey,
  count,
  type FaultCluster,
  sendEvent,
  SITE_KEY,
  startFaultCluster,
  type Tally,
} from "../helpers/fault_cluster.ts";

/** The gateway's deadline for content-service calls (services/gateway/main.ts). */
const CONTENT_DEADLINE_MS = 5_000;
/** Room for a loaded 2-core machine past a deadline. */
const SLACK_MS = 1_500;

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)(
  "network faults between gateway and services",
  () => {
    let cluster: FaultCluster;

    beforeAll(async () => {
      cluster = await startFaultCluster({ serviceProxies: true });
    }, 120_000);
    afterAll(async () => {
      await cluster?.close();
    });

    const read = (path: string) =>
      fetch(`${cluster.url}${path}`, { headers: { "x-crm-key": SITE_KEY } });

    /**
     * n rounds of: a hot read (cached by the gateway), a cold read (a page
     * that does not exist: errors are never cached, so content-service answers
     * each) and an event (ingest-service stores each); the answers by kind and
     * status, the hot read's body and the slowest wait.
     */
    async function traffic(n: number) {
      const tally: Record<string, Tally> = { hot: {}, cold: {}, event: {} };
      const bodies = new Set<string>();
      let slowest = 0;
      await Promise.all(Array.from({ length: n }, async (_, i) => {
        const timed = async (kind: string, answer: Promise<Response>) => {
          const started = performance.now();
          const response = await answer;
          if (kind === "hot" && response.status === 200) bodies.add(await response.clone().text());
          count(tally[kind], await answerKey(response));
          slowest = Math.max(slowest, performance.now() - started);
        };
        await Promise.all([
          timed("hot", read("/content/v1/pages/home?lang=en")),
          timed("cold", read(`/content/v1/pages/missing_${i}`)),
          timed("event", sendEvent(cluster.url, uniqueId("net-"))),
        ]);
      }));
      return { tally, bodies, slowest: Math.round(slowest) };
    }

    it(
      "answers the same through latency and slicing, and ends stalled calls at their deadline with JSON 5xx",
      async () => {
        const { content, auth, ingest } = cluster.proxies as Required<FaultCluster["proxies"]>;
        const healthy = await traffic(5);
        expect(healthy.tally).toEqual({
          hot: { 200: 5 },
          cold: { "404 page_not_found": 5 },
          event: { 200: 5 },
        });
        const [body] = healthy.bodies;

        // content-service answers 6 s late, past the gateway's 5 s deadline.
        const late = await content.toxic("latency", { latency: 6_000 });
        const tooSlow = await traffic(3);
        await content.removeToxic(late);

        // content-service stalls: no byte comes back and the connection stays open.
        const stall = await content.toxic("timeout", { timeout: 0 });
        const stalled = await traffic(3);
        await content.removeToxic(stall);

        // 300 ms each way on every service: slower, same answers.
        const latencies = await Promise.all(
          [content, auth, ingest].map((proxy) => proxy.toxic("latency", { latency: 300 })),
        );
        const slow = await traffic(5);
        await Promise.all(
          [content, auth, ingest].map((proxy, i) => proxy.removeToxic(latencies[i])),
        );

        // Every reply cut into packets of about 16 bytes, 200 µs apart.
        const slicers = await Promise.all(
          [content, auth, ingest].map((proxy) =>
            proxy.toxic("slicer", { average_size: 16, size_variation: 8, delay: 200 })
          ),
        );
        const sliced = await traffic(5);
        await Promise.all([content, auth, ingest].map((proxy, i) => proxy.removeToxic(slicers[i])));

        // ingest-service's connections close after 500 ms without an answer.
        const closing = await ingest.toxic("timeout", { timeout: 500 });
        const closed = await traffic(3);
        await ingest.removeToxic(closing);

        const after = await traffic(3);
        const summary = { tooSlow, stalled, slow, sliced, closed, after };
        console.log(
          `[fault network] ${
            Object.entries(summary).map(([name, run]) =>
              `${name}: ${JSON.stringify(run.tally)} slowest ${run.slowest} ms`
            ).join("; ")
          }`,
        );

        expect(slow.tally).toEqual(healthy.tally);
        expect([...slow.bodies]).toEqual([body]);
        expect(slow.slowest).toBeLessThan(CONTENT_DEADLINE_MS);
        expect(sliced.tally).toEqual(healthy.tally);
        expect([...sliced.bodies]).toEqual([body]);

        // The hot read is served from the gateway's cache; the cold one waits
        // for its deadline and gets the documented JSON 504.
        expect(tooSlow.tally.hot).toEqual({ 200: 3 });
        expect(tooSlow.tally.cold).toEqual({ "504 upstream_timeout": 3 });
        expect(tooSlow.tally.event).toEqual({ 200: 3 });
        expect(tooSlow.slowest).toBeGreaterThanOrEqual(CONTENT_DEADLINE_MS - 100);
        expect(tooSlow.slowest).toBeLessThan(CONTENT_DEADLINE_MS + SLACK_MS);
        // A stalled connection: Deno's HTTP client gives the call up (503)
        // or the deadline ends it (504); either way within the deadline.
        expect(stalled.tally.hot).toEqual({ 200: 3 });
        for (const key of Object.keys(stalled.tally.cold)) {
          expect(["503 service_unavailable", "504 upstream_timeout"]).toContain(key);
        }
        expect(stalled.slowest).toBeLessThan(CONTENT_DEADLINE_MS + SLACK_MS);

        // A connection closed under the call: 503 service_unavailable, at once.
        expect(closed.tally.event).toEqual({ "503 service_unavailable": 3 });
        expect(closed.slowest).toBeLessThan(500 + SLACK_MS);

        expect(after.tally).toEqual({
          hot: { 200: 3 },
          cold: { "404 page_not_found": 3 },
          event: { 200: 3 },
        });
      },
      120_000,
    );
  },
);
