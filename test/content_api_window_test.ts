/**
 * Fixed one-minute windows reset when the next minute starts, in process and
 * in Redis. It waits for a minute boundary (up to a minute, mostly asleep),
 * so it sits in a file of its own that runs beside the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { acmeSite, call, roomInWindow, sleep } from "./helpers/content.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";

const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();
const SMALL = {
  TRUST_PROXY: "1",
  RATE_LIMIT_CONTENT_PER_IP: "5",
  RATE_LIMIT_CONTENT_PER_KEY: "1000",
  RATE_LIMIT_INVALID_KEY_PER_IP: "2",
};

describe("content API limit windows", () => {
  let own: OwnRedis | undefined;
  const systems: { name: string; sys: TestSystem }[] = [];

  beforeAll(async () => {
    const seed = await acmeSite();
    for (const storage of STORAGES) {
      systems.push({ name: storage, sys: await startTestSystem({ storage, seed, env: SMALL }) });
    }
    if (REDIS_WANTED) {
      if (!REDIS_URL) own = await startOwnRedis();
      const env = {
        ...SMALL,
        REDIS_URL: REDIS_URL ?? own!.url,
        REDIS_KEY_PREFIX: `${uniqueId("crmwin")}:`,
      };
      systems.push({ name: "redis", sys: await startTestSystem({ seed, env }) });
    }
  });
  afterAll(async () => {
    for (const { sys } of systems) await sys.close();
    await own?.close();
  });

  it("lifts every refusal when the next minute starts", async () => {
    await roomInWindow(5_000);
    const minute = Math.floor(Date.now() / 60_000);
    for (const { name, sys } of systems) {
      // One address over its limit, another over its invalid keys.
      for (let i = 0; i < 5; i++) {
        expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.1" })).status).toBe(200);
      }
      expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.1" })).status, name)
        .toBe(429);
      for (let i = 0; i < 2; i++) {
        expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.2", key: null })).status)
          .toBe(401);
      }
      const third = await call(sys.url, "/content/v1/langs", { ip: "203.0.113.2", key: null });
      expect(third.status, name).toBe(429);
      expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.2" })).status, name)
        .toBe(429);
    }
    expect(Math.floor(Date.now() / 60_000)).toBe(minute);
    // Still refused late in the same minute, and not after it.
    await sleep(60_000 - (Date.now() % 60_000) - 800);
    for (const { name, sys } of systems) {
      expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.2" })).status, name)
        .toBe(429);
    }
    await sleep(60_000 - (Date.now() % 60_000) + 50);
    for (const { name, sys } of systems) {
      for (const ip of ["203.0.113.1", "203.0.113.2"]) {
        expect((await call(sys.url, "/content/v1/langs", { ip })).status, `${name} ${ip}`)
          .toBe(200);
      }
    }
  }, 90_000);
});
