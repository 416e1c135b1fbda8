/**
 * Content API limits through HTTP with the specified values (300 per IP, 600
 * per site key, more than 20 invalid-key requests blocking the IP), on every
 * storage, in process and shared through Redis by two gateway replicas.
 * Client addresses come from X-Forwarded-For with TRUST_PROXY=1, each test
 * with addresses of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { REDIS_URL, SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  acmeSite,
  type Answer,
  call,
  type CallOptions,
  ERROR_HEADERS,
  errorHeaders,
  roomInWindow,
  UNKNOWN_KEY,
} from "./helpers/content.ts";
import { type GatewayReplica, startGatewayReplica } from "./helpers/gateway.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";
import { KeyKind } from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import { ManualClock } from "../services/lib/clock.ts";

/** The specification's limits: no RATE_LIMIT_* setting, so the defaults apply. */
const SPECIFIED = {
  TRUST_PROXY: "1",
  RATE_LIMIT_CONTENT_PER_IP: "",
  RATE_LIMIT_CONTENT_PER_KEY: "",
  RATE_LIMIT_INVALID_KEY_PER_IP: "",
};
const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();
/** Every system's time: a test that needs room in a window moves it, never waits. */
const clock = new ManualClock();

let ipSeed = Math.floor(Math.random() * 200);
/** A client address no other test uses. */
const freshIp = () => `198.${(ipSeed = (ipSeed + 1) % 250)}.${Math.floor(Math.random() * 250)}.7`;

/** Sends n requests, 25 at a time, and returns the statuses in order. */
async function burst(
  urls: string[],
  n: number,
  path: (i: number) => string,
  options: (i: number) => CallOptions,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < n; start += 25) {
    const batch = Array.from({ length: Math.min(25, n - start) }, (_, j) => start + j);
    statuses.push(
      ...await Promise.all(
        batch.map(async (i) => (await call(urls[i % urls.length], path(i), options(i))).status),
      ),
    );
  }
  return statuses;
}

const PATHS = [
  "/content/v1/pages/home",
  "/content/v1/blocks/title?lang=de",
  "/content/v1/blog",
  "/content/v1/pages/nope",
  "/content/v1/langs",
];
const anyPath = (i: number) => PATHS[i % PATHS.length];

function expectLimited(answer: Answer) {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ message: "rate_limit_exceeded" });
  expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
  expect(answer.headers.get("retry-after")).toBeNull();
}

/**
 * The limit rows, against one or several gateways sharing counters. Each test
 * uses keys of its own, so one test's key count never reaches another's.
 */
function limitRows(urls: () => string[], system: () => TestSystem) {
  const at = (i: number) => urls()[i % urls().length];
  const freshKey = async () =>
    (await system().system.admin.auth.createKey({ siteId: "acme", kind: KeyKind.SITE })).key;

  it("allows 300 requests per IP a minute and refuses the rest with 429", async () => {
    roomInWindow(clock, 15_000);
    const [ip, key, other] = [freshIp(), await freshKey(), await freshKey()];
    const statuses = await burst(urls(), 300, anyPath, () => ({ ip, key }));
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expectLimited(await call(at(0), "/content/v1/pages/home", { ip, key }));
    // Whatever the key, endpoint or replica, for the rest of the minute.
    expectLimited(await call(at(1), "/content/v1/langs", { ip, key: other }));
    expectLimited(await call(at(0), "/content/v1/pages/home", { ip, key: null }));
    // Another address is not affected.
    expect((await call(at(1), "/content/v1/pages/home", { ip: freshIp(), key })).status).toBe(200);
  });

  it("allows 600 requests per site key a minute, from any addresses", async () => {
    roomInWindow(clock, 15_000);
    const [key, other] = [await freshKey(), await freshKey()];
    const ips = [freshIp(), freshIp(), freshIp()];
    const statuses = await burst(urls(), 600, anyPath, (i) => ({ ip: ips[i % 3], key }));
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expectLimited(await call(at(0), "/content/v1/pages/home", { ip: freshIp(), key }));
    expectLimited(await call(at(1), `/content/v1/langs?key=${key}`, { ip: freshIp(), key: null }));
    // The limit is per key: the site's other key still works.
    expect((await call(at(0), "/content/v1/pages/home", { ip: freshIp(), key: other })).status)
      .toBe(200);
  });

  it("blocks an IP with more than 20 invalid-key requests, even with a valid key", async () => {
    roomInWindow(clock, 15_000);
    const [ip, key] = [freshIp(), await freshKey()];
    const invalid = [null, "pk_bad", UNKNOWN_KEY, key.toUpperCase()];
    const statuses = await burst(urls(), 20, anyPath, (i) => ({ ip, key: invalid[i % 4] }));
    expect(statuses).toEqual(Array(20).fill(401));
    // The 21st invalid-key request is already refused, and so is everything after it.
    expectLimited(await call(at(0), "/content/v1/pages/home", { ip, key: UNKNOWN_KEY }));
    expectLimited(await call(at(1), "/content/v1/pages/home", { ip, key }));
    expectLimited(await call(at(0), `/content/v1/langs?key=${key}`, { ip, key: null }));
    expect((await call(at(1), "/content/v1/pages/home", { ip: freshIp(), key })).status).toBe(200);
  });

  it("counts valid requests apart from invalid ones: 20 invalid then valid ones pass", async () => {
    roomInWindow(clock, 15_000);
    const [ip, key] = [freshIp(), await freshKey()];
    expect(await burst(urls(), 20, anyPath, () => ({ ip, key: null }))).toEqual(
      Array(20).fill(401),
    );
    expect(await burst(urls(), 30, anyPath, () => ({ ip, key }))).not.toContain(429);
  });
}

describe.each(SYSTEM_STORAGES)("content API limits on %s", (storage) => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await acmeSite(), env: SPECIFIED, clock });
  });
  afterAll(async () => {
    await sys?.close();
  });

  limitRows(() => [sys.url], () => sys);

  it("sends CORS, JSON and no Retry-After on a 429, and answers preflights still", async () => {
    const ip = freshIp();
    await burst([sys.url], 21, anyPath, () => ({ ip, key: null }));
    const answer = await call(sys.url, "/content/v1/pages/home", {
      ip,
      headers: { origin: "https://site.example" },
    });
    expectLimited(answer);
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await call(sys.url, "/content/v1/pages/home", {
      ip,
      key: null,
      method: "OPTIONS",
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("content API limits are settings", () => {
  it("takes smaller limits from the environment, and the socket address without TRUST_PROXY", async () => {
    const sys = await startTestSystem({
      seed: await acmeSite(),
      clock,
      env: {
        TRUST_PROXY: "0",
        RATE_LIMIT_CONTENT_PER_IP: "5",
        RATE_LIMIT_CONTENT_PER_KEY: "1000",
        RATE_LIMIT_INVALID_KEY_PER_IP: "1000",
      },
    });
    try {
      roomInWindow(clock, 5_000);
      // A client cannot escape its limit by writing X-Forwarded-For itself.
      const statuses = await burst([sys.url], 6, anyPath, () => ({ ip: freshIp() }));
      expect(statuses.slice(0, 5)).not.toContain(429);
      expect(statuses[5]).toBe(429);
    } finally {
      await sys.close();
    }
  });
});

describe.each(SYSTEM_STORAGES)("content API limits shared through Redis on %s", (storage) => {
  let own: OwnRedis | undefined;
  let redisUrl: string;
  let sys: TestSystem;
  let replica: GatewayReplica;
  const prefix = `${uniqueId("crmlimits")}:`;

  beforeAll(async () => {
    if (!REDIS_WANTED) return;
    if (!REDIS_URL) own = await startOwnRedis();
    redisUrl = REDIS_URL ?? own!.url;
    sys = await startTestSystem({
      storage,
      seed: await acmeSite(),
      env: { ...SPECIFIED, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix },
      clock,
    });
    replica = await startGatewayReplica(sys, { redisUrl });
  });
  afterAll(async () => {
    await replica?.close();
    await sys?.close();
    await own?.close();
  });

  describe.skipIf(!REDIS_WANTED)("two gateways, one set of windows", () => {
    limitRows(() => [sys.url, replica.url], () => sys);

    it("keeps the counters in Redis, per window, expiring", async () => {
      const redis = new Redis(redisUrl, { lazyConnect: true });
      try {
        await redis.connect();
        const keys = await redis.keys(`${prefix}rl:*`);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) expect(key).toMatch(new RegExp(`^${prefix}rl:\\d+:c:`));
        const ttl = await redis.pttl(keys[0]);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(120_000);
      } finally {
        redis.disconnect();
      }
    });
  });
});
