/**
 * Redis down, slow and cut mid-reply, with a real fault injector: the four
 * services as separate processes on Postgres, Redis behind Toxiproxy. As
 * docs/operations.md ("Faults") promises: the gateway keeps serving content
 * and taking events on its in-process windows, says so in its log, no
 * request waits much beyond the Redis command timeout (500 ms), and it goes
 * back to Redis when Redis returns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  type FaultCluster,
  SECRET_KEY,
  SITE_KEY,
  startFaultCluster,
} from "../helpers/fault_cluster.ts";

/** The Redis command timeout (services/lib/redis.ts), plus room for a loaded 2-core machine. */
const MAX_WAIT_MS = 500 + 700;

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("Redis faults", () => {
  let cluster: FaultCluster;

  beforeAll(async () => {
    cluster = await startFaultCluster({ redisProxy: true, env: { LOG_LEVEL: "info" } });
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  });

  /** A content read and a server event; their statuses and the slower one's time. */
  async function traffic(n: number) {
    const statuses: Record<string, number> = {};
    let slowest = 0;
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const [read, event] = await Promise.all([
        fetch(`${cluster.url}/content/v1/pages/home`, { headers: { "x-crm-key": SITE_KEY } }),
        fetch(`${cluster.url}/marketing/event`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
          body: JSON.stringify({ name: "signup", event_id: uniqueId("fault-") }),
        }),
      ]);
      slowest = Math.max(slowest, performance.now() - started);
      for (const answer of [read, event]) {
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        await answer.body?.cancel();
      }
    }
    return { statuses, slowest };
  }

  const counterKeys = async () => {
    const redis = new Redis(REDIS_URL!, { lazyConnect: true });
    await redis.connect();
    try {
      return (await redis.keys(`${cluster.redisKeyPrefix}*`)).length;
    } finally {
      redis.disconnect();
    }
  };

  it("keeps serving while Redis is slow, down or cut, and goes back to it", async () => {
    const healthy = await traffic(10);
    expect(healthy.statuses).toEqual({ 200: 20 });
    expect(await counterKeys()).toBeGreaterThan(0);

    // Slow: every reply 800 ms late, beyond the command timeout.
    const redisProxy = cluster.proxies.redis!;
    const slow = await redisProxy.toxic("latency", { latency: 800 });
    const slowRun = await traffic(10);
    expect(slowRun.statuses).toEqual({ 200: 20 });
    expect(slowRun.slowest).toBeLessThan(MAX_WAIT_MS);
    await redisProxy.removeToxic(slow);

    // Cut mid-reply: connections close after a few bytes.
    const cut = await redisProxy.toxic("limit_data", { bytes: 64 });
    const cutRun = await traffic(10);
    expect(cutRun.statuses).toEqual({ 200: 20 });
    expect(cutRun.slowest).toBeLessThan(MAX_WAIT_MS);
    await redisProxy.removeToxic(cut);

    // Down.
    await redisProxy.disable();
    const downRun = await traffic(20);
    expect(downRun.statuses).toEqual({ 200: 40 });
    expect(downRun.slowest).toBeLessThan(MAX_WAIT_MS);
    expect(cluster.processes.gateway.stderr()).toContain("rate limits: Redis failed");

    // Back: within a few seconds the windows are in Redis again.
    await redisProxy.enable();
    const before = await counterKeys();
    await expect.poll(async () => {
      await traffic(2);
      return cluster.processes.gateway.stderr().includes("rate limits: Redis is back");
    }, { timeout: 15_000, interval: 500 }).toBe(true);
    const flushed = await traffic(5);
    expect(flushed.statuses).toEqual({ 200: 10 });
    expect(await counterKeys()).toBeGreaterThanOrEqual(before);
  }, 120_000);
});
