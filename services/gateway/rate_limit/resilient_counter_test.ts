import { describe, expect, it } from "vitest";
import type { Redis } from "../../lib/redis.ts";
import { createLogger } from "../../lib/log.ts";
import { WINDOW_MS } from "./counter.ts";
import { ResilientCounter } from "./resilient_counter.ts";

/** A Redis that is away: every count and every probe fails. */
function awayRedis(): Redis {
  return {
    defineCommand() {},
    crmRateHit: () => Promise.reject(new Error("connect ECONNREFUSED")),
    ping: () => Promise.reject(new Error("connect ECONNREFUSED")),
  } as unknown as Redis;
}

describe("ResilientCounter while Redis is away", () => {
  it("counts in windows of its own, one per counter, and says once that it fell back", async () => {
    const lines: string[] = [];
    const log = createLogger("warn", {}, (line) => lines.push(line));
    const first = new ResilientCounter(awayRedis(), "t:", log);
    const second = new ResilientCounter(awayRedis(), "t:", log);
    const hit = [{ name: "m:ip:203.0.113.9", by: 1 }];
    const now = 5 * WINDOW_MS;
    expect(await first.hit(hit, now)).toEqual([1]);
    expect(await first.hit(hit, now)).toEqual([2]);
    expect(await second.hit(hit, now)).toEqual([1]);
    expect(first.degraded && second.degraded).toBe(true);
    expect(lines.filter((l) => l.includes("Redis failed"))).toHaveLength(2);
  });
});
