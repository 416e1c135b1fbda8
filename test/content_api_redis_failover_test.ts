/**
 * Redis failing mid-flight, with a redis-server of the test's own: the
 * gateway keeps serving and enforcing the limits in process, says so in its
 * log, and counts in Redis again once it returns. Also: at most one Redis
 * round trip per request while Redis is well.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { REDIS_URL, STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { acmeSite, call, eventually, roomInWindow } from "./helpers/content.ts";
import { type CapturedLog, captureLog } from "./helpers/log_capture.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";
import { RedisCounter } from "../services/gateway/rate_limit/redis_counter.ts";
import { ManualClock } from "../services/lib/clock.ts";

const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();
const PER_IP = 5;
const PREFIX = "crmfailover:";

// Redis failing is independent of storage: one storage is enough, Postgres when configured.
const STORAGE = STORAGES[STORAGES.length - 1];

describe.each([STORAGE])("content API when Redis fails, on %s", (storage) => {
  let own: OwnRedis;
  let sys: TestSystem;
  let captured: CapturedLog;
  let ipSeed = 0;
  const clock = new ManualClock();
  const freshIp = () => `192.0.2.${++ipSeed}`;
  const status = async (ip: string) =>
    (await call(sys.url, "/content/v1/pages/home", { ip })).status;
  /** PER_IP requests pass and the next is refused. */
  const expectLimitEnforced = async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i <= PER_IP; i++) statuses.push(await status(ip));
    expect(statuses).toEqual([...Array(PER_IP).fill(200), 429]);
  };
  const redisClient = async () => {
    const client = new Redis(own.url, { lazyConnect: true });
    await client.connect();
    return client;
  };
  const counterKeys = async () => {
    const client = await redisClient();
    try {
      return await client.keys(`${PREFIX}rl:*`);
    } finally {
      client.disconnect();
    }
  };

  beforeAll(async () => {
    if (!REDIS_WANTED) return;
    own = await startOwnRedis();
    captured = captureLog();
    sys = await startTestSystem({
      storage,
      seed: await acmeSite(),
      log: captured.log,
      clock,
      env: {
        REDIS_URL: own.url,
        REDIS_KEY_PREFIX: PREFIX,
        TRUST_PROXY: "1",
        RATE_LIMIT_CONTENT_PER_IP: String(PER_IP),
        RATE_LIMIT_CONTENT_PER_KEY: "100000",
        RATE_LIMIT_INVALID_KEY_PER_IP: "100000",
      },
    });
  });
  afterAll(async () => {
    await sys?.close();
    await own?.close();
  });

  it.skipIf(!REDIS_WANTED)("makes at most one Redis round trip per hot request", async () => {
    await status(freshIp()); // warm up: key and answer cached in the gateway
    const client = await redisClient();
    try {
      await client.config("RESETSTAT");
      const n = 40;
      for (let i = 0; i < n; i++) expect(await status(freshIp())).toBe(200);
      const stats = await client.info("commandstats");
      const calls: Record<string, number> = {};
      for (const [, name, count] of stats.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
        calls[name] = Number(count);
      }
      // Commands a script runs are counted too: INCRBY, PEXPIRE and one GET
      // per script call are the counting script's own work, not round trips.
      const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0);
      const others = Object.entries(calls)
        .filter(([name]) => !/^(evalsha|eval|incrby|pexpire|get|info|config\|.*)$/.test(name))
        .reduce((sum, [, count]) => sum + count, 0);
      expect(scripts).toBeGreaterThan(0);
      expect(scripts + others).toBeLessThanOrEqual(n);
      expect(calls.get ?? 0).toBeLessThanOrEqual(scripts);
    } finally {
      client.disconnect();
    }
  });

  it.skipIf(!REDIS_WANTED)(
    "keeps serving and limiting in process while Redis is down, and goes back to it",
    async () => {
      roomInWindow(clock, 25_000);
      await expectLimitEnforced();
      expect((await counterKeys()).length).toBeGreaterThan(0);

      await own.kill();
      await expectLimitEnforced();
      for (let i = 0; i < 10; i++) expect(await status(freshIp())).toBe(200);
      const failed = captured.find("Redis failed");
      expect(failed.length).toBe(1); // the switch is logged once, not per request
      expect(failed[0].level).toBe("warn");

      await own.restart();
      expect(await counterKeys()).toEqual([]); // a new, empty server
      const back = await eventually(
        async () => {
          expect(await status(freshIp())).toBe(200);
          return captured.find("Redis is back").length > 0;
        },
        10_000,
        200,
      );
      expect(back).toBe(true);
      await expectLimitEnforced();
      expect((await counterKeys()).length).toBeGreaterThan(0);
    },
    60_000,
  );

  it.skipIf(!REDIS_WANTED)("does not hang when Redis hangs", async () => {
    roomInWindow(clock, 15_000);
    const backBefore = captured.find("Redis is back").length;
    own.pause();
    try {
      const started = Date.now();
      expect(await status(freshIp())).toBe(200);
      expect(Date.now() - started).toBeLessThan(3000);
      // Once switched, requests no longer wait on Redis at all.
      const again = Date.now();
      for (let i = 0; i < 5; i++) expect(await status(freshIp())).toBe(200);
      expect(Date.now() - again).toBeLessThan(1000);
      await expectLimitEnforced();
    } finally {
      own.resume();
    }
    const back = await eventually(
      async () => {
        await status(freshIp());
        return captured.find("Redis is back").length > backBefore;
      },
      10_000,
      200,
    );
    expect(back).toBe(true);
  }, 30_000);
});

describe.skipIf(!REDIS_WANTED)("Redis counters", () => {
  let own: OwnRedis;
  let client: Redis;
  beforeAll(async () => {
    own = await startOwnRedis();
    client = new Redis(own.url, { lazyConnect: true });
    await client.connect();
  });
  afterAll(async () => {
    client?.disconnect();
    await own?.close();
  });

  it("counts requests of one turn in one script call, each exactly and in order", async () => {
    const counter = new RedisCounter(client, "unit:");
    const now = Date.now();
    await client.config("RESETSTAT");
    const results = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) => counter.hit([{ name: "ip", by: 1 }, { name: "bad", by: i % 2 }], now),
      ),
    );
    expect(results.map(([ip]) => ip)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(results.map(([, bad]) => bad)).toEqual(
      Array.from({ length: 50 }, (_, i) => Math.floor(i / 2) + (i % 2)),
    );
    const stats = await client.info("commandstats");
    const scripts = Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
      Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    expect(scripts).toBeGreaterThanOrEqual(1);
    expect(scripts).toBeLessThanOrEqual(2);
    const window = Math.floor(now / 60_000);
    expect(await client.get(`unit:rl:${window}:ip`)).toBe("50");
    expect(await client.pttl(`unit:rl:${window}:ip`)).toBeGreaterThan(60_000);
  });
});
