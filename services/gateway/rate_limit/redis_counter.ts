/**
 * Counters shared by every gateway replica in Redis. One script counts and
 * reads a request's counters atomically. Requests handled in the same turn of
 * the event loop share one script call (one round trip, one socket write):
 * each is still counted in order and atomically, and a busy gateway makes
 * far fewer system calls (under load, dozens of requests per call; the
 * socket write was the largest cost of a hot read with Redis). Keys carry
 * the window number and expire after two minutes.
 */
import process from "node:process";
import type { Redis } from "../../lib/redis.ts";
import { type CounterHit, WINDOW_MS, type WindowCounter, windowOf } from "./counter.ts";

const SCRIPT = `
local ttl = tonumber(ARGV[#ARGV])
local out = {}
for i, key in ipairs(KEYS) do
  local by = tonumber(ARGV[i])
  if by > 0 then
    local value = redis.call('INCRBY', key, by)
    if value == by then redis.call('PEXPIRE', key, ttl) end
    out[i] = value
  else
    out[i] = tonumber(redis.call('GET', key) or '0')
  end
end
return out
`;

/** Largest number of requests in one script call. */
const MAX_BATCH = 256;

type WithHit = Redis & {
  crmRateHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

interface Pending {
  keys: string[];
  increments: number[];
  resolve: (values: number[]) => void;
  reject: (error: unknown) => void;
}

export class RedisCounter implements WindowCounter {
  #redis: WithHit;
  #queue: Pending[] = [];

  constructor(redis: Redis, private readonly keyPrefix: string) {
    if (!("crmRateHit" in redis)) redis.defineCommand("crmRateHit", { lua: SCRIPT });
    this.#redis = redis as WithHit;
  }

  hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    const window = windowOf(now);
    return new Promise((resolve, reject) => {
      this.#queue.push({
        keys: hits.map((h) => `${this.keyPrefix}rl:${window}:${h.name}`),
        increments: hits.map((h) => h.by),
        resolve,
        reject,
      });
      // Everything asked in this turn of the event loop goes in one call.
      if (this.#queue.length === 1) process.nextTick(() => this.#flush());
      else if (this.#queue.length >= MAX_BATCH) this.#flush();
    });
  }

  #flush() {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    const keys = batch.flatMap((p) => p.keys);
    const increments = batch.flatMap((p) => p.increments);
    this.#redis.crmRateHit(keys.length, ...keys, ...increments, 2 * WINDOW_MS).then(
      (values) => {
        let at = 0;
        for (const p of batch) p.resolve(values.slice(at, at += p.keys.length));
      },
      (error) => {
        for (const p of batch) p.reject(error);
      },
    );
  }
}
