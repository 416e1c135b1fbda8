/**
 * Counters shared by every gateway replica in Redis. One script counts and
 * reads a request's counters atomically. Requests handled in the same turn of
 * the event loop share one script call (one round trip, one socket write):
 * each is still counted in order and atomically, and a busy gateway makes
 * far fewer system calls (under load, dozens of requests per call; the
 * socket write was the largest cost of a hot read with Redis), and a counter
 * counted by many of them is sent once with their sum. Keys carry
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
    // Each counter once per call, with the batch's increments summed: under
    // load the requests of a turn mostly count the same few counters (one
    // site key, a few IPs), and one INCRBY of the sum leaves Redis exactly
    // where the INCRBYs one by one would. The script is atomic, so each
    // request's own values follow from the counter's value before the call
    // plus the increments queued ahead of it, as if counted one by one.
    const slots = new Map<string, number>();
    const keys: string[] = [];
    const totals: number[] = [];
    for (const p of batch) {
      for (let i = 0; i < p.keys.length; i++) {
        let slot = slots.get(p.keys[i]);
        if (slot === undefined) {
          slot = keys.length;
          slots.set(p.keys[i], slot);
          keys.push(p.keys[i]);
          totals.push(0);
        }
        totals[slot] += p.increments[i];
      }
    }
    this.#redis.crmRateHit(keys.length, ...keys, ...totals, 2 * WINDOW_MS).then(
      (values) => {
        const running = values.map((value, slot) => value - totals[slot]);
        for (const p of batch) {
          p.resolve(p.keys.map((key, i) => {
            const slot = slots.get(key)!;
            return running[slot] += p.increments[i];
          }));
        }
      },
      (error) => {
        for (const p of batch) p.reject(error);
      },
    );
  }
}
