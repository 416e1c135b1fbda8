/**
 * The shared marketing limits: 120 requests per IP (the default) and a
 * number per site a minute across page views, events and leads, in-process
 * and (when REDIS_URL is set) in Redis, answered 429 rate_limit_exceeded.
 * The per-site limit is set to 200 here, not its default of 6000: the
 * counting is the same for any limit, and each request stores a row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, beacon, postEvent } from "./helpers/marketing.ts";
import { roomInWindow } from "./helpers/content.ts";
import { ManualClock } from "../services/lib/clock.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const COUNTERS = REDIS_URL ? ["in-process", "redis"] : ["in-process"];
  const PER_SITE = 200;
  const PER_IP = 120;

  describe.each(COUNTERS)("marketing limits with %s counters", (counters) => {
    /** The system's time: a test that needs room in a window moves it, never waits. */
    const clock = new ManualClock();
    let sys: TestSystem;

    beforeAll(async () => {
      sys = await startTestSystem({
        storage,
        seed: await analyticsManifest(),
        redis: counters === "redis",
        clock,
        env: {
          TRUST_PROXY: "1",
          RATE_LIMIT_MARKETING_PER_IP: String(PER_IP),
          RATE_LIMIT_MARKETING_PER_SITE: String(PER_SITE),
        },
      });
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("allows 120 requests per IP a minute across views, events and leads, then 429", async () => {
      roomInWindow(clock, 20_000);
      const ip = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
      const headers = { "x-forwarded-for": ip };
      const sends = [
        () => beacon(sys, "/marketing/view", { u: "https://demo.example/" }, headers),
        () => beacon(sys, "/marketing/act", { n: "note", u: "https://demo.example/" }, headers),
        () => beacon(sys, "/marketing/lead", { email: "a@b.c" }, headers),
        () => postEvent(sys, { name: "note" }, headers),
      ];
      // All at once: each counts once however they interleave (and they share commits).
      const statuses = await Promise.all(
        Array.from({ length: PER_IP }, async (_, i) => {
          const res = await sends[i % 4]();
          await res.body?.cancel();
          return res.status;
        }),
      );
      expect(statuses.filter((s) => s === 429)).toHaveLength(0);
      for (const send of sends) {
        const res = await send();
        expect(res.status).toBe(429);
        expect(await res.json()).toEqual({ message: "rate_limit_exceeded" });
      }
      const other = await beacon(sys, "/marketing/view", { u: "https://demo.example/" }, {
        "x-forwarded-for": "198.51.100.7",
      });
      expect(other.status).toBe(204);
    });

    it(`allows ${PER_SITE} requests per site a minute, from any number of IPs, then 429`, async () => {
      // A minute of its own: the earlier test's requests counted for the site in theirs.
      clock.advance(60_000 - (clock.now() % 60_000) + 50);
      let sent = 0;
      const statuses = new Map<number, number>();
      // 10 addresses of 20 requests each: under the per-IP limit, at the site limit.
      const worker = async (w: number) => {
        for (let i = 0; i < PER_SITE / 10; i++) {
          const res = await beacon(sys, "/marketing/view", { u: "https://demo.example/" }, {
            "x-forwarded-for": `192.0.2.${w + 1}`,
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          await res.body?.cancel();
          sent++;
        }
      };
      await Promise.all(Array.from({ length: 10 }, (_, w) => worker(w)));
      expect(sent).toBe(PER_SITE);
      expect(Object.fromEntries(statuses)).toEqual({ 204: PER_SITE });
      const over = await postEvent(sys, { name: "note" }, { "x-forwarded-for": "192.0.2.200" });
      expect(over.status).toBe(429);
      expect((await over.json()).message).toBe("rate_limit_exceeded");
    });
  });
});
