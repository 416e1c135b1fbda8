/**
 * Redis counters with an in-process fallback. When a Redis call fails the
 * gateway keeps serving with its own windows (exact for one replica, per
 * replica otherwise), logs the switch once, and goes back to Redis as soon as
 * ioredis has reconnected.
 */
import type { Redis } from "../../lib/redis.ts";
import type { Logger } from "../../lib/log.ts";
import { type CounterHit, LocalCounter, type WindowCounter } from "./counter.ts";
import { RedisCounter } from "./redis_counter.ts";

export class ResilientCounter implements WindowCounter {
  #redis: Redis;
  #shared: RedisCounter;
  #local = new LocalCounter();
  #degraded = false;
  #log: Logger;

  constructor(redis: Redis, keyPrefix: string, log: Logger) {
    this.#redis = redis;
    this.#shared = new RedisCounter(redis, keyPrefix);
    this.#log = log;
  }

  get degraded(): boolean {
    return this.#degraded;
  }

  async hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    if (this.#degraded) {
      if (this.#redis.status !== "ready") return this.#local.hitSync(hits, now);
      this.#degraded = false;
      this.#log.info("rate limits: Redis is back; shared windows again");
    }
    try {
      return await this.#shared.hit(hits, now);
    } catch (error) {
      this.#degraded = true;
      this.#log.warn("rate limits: Redis failed; using in-process windows until it returns", {
        error,
      });
      return this.#local.hitSync(hits, now);
    }
  }
}
