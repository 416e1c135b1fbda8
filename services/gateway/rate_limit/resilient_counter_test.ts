import { afterEach, describe, expect, it } from "vitest";
import type { Redis } from "../../lib/redis.ts";
import { createLogger } from "../../lib/log.ts";
import { ManualClock } from "../../lib/clock.ts";
import { LocalCounter, WINDOW_MS } from "./counter.ts";
import { PortCounter, serveCounter } from "./port_counter.ts";
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
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it("counts in the windows it is given: a process's two gateway threads share the main thread's", async () => {
    const lines: string[] = [];
    const log = createLogger("warn", {}, (line) => lines.push(line));
    const clock = new ManualClock(3 * WINDOW_MS + 10);
    // The main thread's windows, served to the second thread through a port (gateway_thread.ts).
    const windows = new LocalCounter();
    const channel = new MessageChannel();
    const remote = new PortCounter(channel.port1);
    stops.push(serveCounter(channel.port2, windows, clock), () => remote.close());
    const mainThread = new ResilientCounter(awayRedis(), "t:", log, windows);
    const secondThread = new ResilientCounter(awayRedis(), "t:", log, remote);
    const hit = [{ name: "c:ip:203.0.113.9", by: 1 }];
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const counter = i % 2 === 0 ? mainThread : secondThread;
      counts.push((await counter.hit(hit, clock.now()))[0]);
    }
    // One count across both threads, as without Redis; each thread said once that it fell back.
    expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
    expect(mainThread.degraded && secondThread.degraded).toBe(true);
    expect(lines.filter((l) => l.includes("Redis failed"))).toHaveLength(2);
  });

  it("counts in windows of its own when given none", async () => {
    const log = createLogger("error", {}, () => {});
    const first = new ResilientCounter(awayRedis(), "t:", log);
    const second = new ResilientCounter(awayRedis(), "t:", log);
    const hit = [{ name: "m:ip:203.0.113.9", by: 1 }];
    const now = 5 * WINDOW_MS;
    expect(await first.hit(hit, now)).toEqual([1]);
    expect(await first.hit(hit, now)).toEqual([2]);
    expect(await second.hit(hit, now)).toEqual([1]);
  });
});
