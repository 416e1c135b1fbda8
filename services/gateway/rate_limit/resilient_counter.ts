/**
 * Redis counters with an in-process fallback. When a Redis call fails (or
 * times out) the gateway keeps serving with its own windows (exact for one
 * replica, per replica otherwise) and logs the switch once. While degraded no
 * request waits on Redis: a background PING, at most one a second, finds out
 * when Redis answers again, and the next requests count there again.
 */
import type { Redis } from "../../lib/redis.ts";
import type { Logger } from "../../lib/log.ts";
import { type CounterHit, LocalCounter, type WindowCounter } from "./counter.ts";
import { RedisCounter } from "./redis_counter.ts";
import { meter } from "../../lib/telemetry.ts";

/** Counters of this process (held weakly); the gauge reads whether any runs on its fallback. */
const counters = new Set<WeakRef<ResilientCounter>>();
meter.createObservableGauge("crm.redis.fallback", {
  description:
    "1 while the gateway's rate limits run on in-process windows because Redis failed, else 0",
  // A state, not a ratio: unit "1" would be exported to Prometheus as crm_redis_fallback_ratio.
  unit: "{state}",
}).addCallback((result) => {
  let degraded = false;
  for (const ref of counters) {
    const counter = ref.deref();
    if (!counter) counters.delete(ref);
    else degraded ||= counter.degraded;
  }
  if (counters.size === 0) return;
  result.observe(degraded ? 1 : 0, {
    "crm.redis.user": "rate_limits",
  });
});

const PROBE_EVERY_MS = 1000;

export class ResilientCounter implements WindowCounter {
  #redis: Redis;
  #shared: RedisCounter;
  #local = new LocalCounter();
  #degraded = false;
  #probing = false;
  #nextProbe = 0;
  #log: Logger;

  constructor(redis: Redis, keyPrefix: string, log: Logger) {
    this.#redis = redis;
    this.#shared = new RedisCounter(redis, keyPrefix);
    this.#log = log;
    counters.add(new WeakRef(this));
  }

  get degraded(): boolean {
    return this.#degraded;
  }

  hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    if (this.#degraded) {
      this.#probe();
      return this.#local.hit(hits, now);
    }
    return this.#shared.hit(hits, now).catch((error) => {
      if (!this.#degraded) {
        this.#degraded = true;
        this.#nextProbe = Date.now() + PROBE_EVERY_MS;
        this.#log.warn("rate limits: Redis failed; using in-process windows until it returns", {
          error,
        });
      }
      return this.#local.hit(hits, now);
    });
  }

  #probe() {
    if (this.#probing || Date.now() < this.#nextProbe) return;
    this.#probing = true;
    this.#redis.ping().then(
      () => {
        this.#degraded = false;
        this.#log.info("rate limits: Redis is back; shared windows again");
      },
      () => {/* still away; the next probe tries again */},
    ).finally(() => {
      this.#probing = false;
      this.#nextProbe = Date.now() + PROBE_EVERY_MS;
    });
  }
}
