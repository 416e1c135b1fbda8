/**
 * Fixed one-minute windows reset when the next minute starts, in process and
 * in Redis: the systems' clock is moved to the end of the minute and past it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { acmeSite, call, roomInWindow } from "./helpers/content.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";
import { ManualClock } from "../services/lib/clock.ts";

const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();
const SMALL = {
  TRUST_PROXY: "1",
  RATE_LIMIT_CONTENT_PER_IP: "5",
  RATE_LIMIT_CONTENT_PER_KEY: "1000",
  RATE_LIMIT_INVALID_KEY_PER_IP: "2",
};

describe("content API limit windows", () => {
  const clock = new ManualClock();
  let own: OwnRedis | undefined;
  const systems: { name: string; sys: TestSystem }[] = [];

  beforeAll(async () => {
    const seed = await acmeSite();
    for (const storage of SYSTEM_STORAGES) {
      systems.push({
        name: storage,
        sys: await startTestSystem({ storage, seed, env: SMALL, clock }),
      });
    }
    if (REDIS_WANTED) {
      if (!REDIS_URL) own = await startOwnRedis();
      const env = {
        ...SMALL,
        REDIS_URL: REDIS_URL ?? own!.url,
        REDIS_KEY_PREFIX: `${uniqueId("crmwin")}:`,
      };
      systems.push({ name: "redis", sys: await startTestSystem({ seed, env, clock }) });
    }
  });
  afterAll(async () => {
    for (const { sys } of systems) await sys.close();
    await own?.close();
  });

  it("lifts every refusal when the next minute starts", async () => {
    roomInWindow(clock, 5_000);
    const minute = Math.floor(clock.now() / 60_000);
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
    expect(Math.floor(clock.now() / 60_000)).toBe(minute);
    // Still refused late in the same minute, and not after it.
    clock.advance(60_000 - (clock.now() % 60_000) - 800);
    for (const { name, sys } of systems) {
      expect((await call(sys.url, "/content/v1/langs", { ip: "203.0.113.2" })).status, name)
        .toBe(429);
    }
    clock.advance(60_000 - (clock.now() % 60_000) + 50);
    for (const { name, sys } of systems) {
      for (const ip of ["203.0.113.1", "203.0.113.2"]) {
        expect((await call(sys.url, "/content/v1/langs", { ip })).status, `${name} ${ip}`)
          .toBe(200);
      }
    }
  });
});
