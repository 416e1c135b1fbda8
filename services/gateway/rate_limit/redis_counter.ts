/**
 * Counters shared by every gateway replica in Redis: one script call per
 * request counts and reads all of that request's counters atomically, in one
 * round trip. Keys carry the window number and expire after two minutes.
 */
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

type WithHit = Redis & {
  crmRateHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

export class RedisCounter implements WindowCounter {
  #redis: WithHit;

  constructor(redis: Redis, private readonly keyPrefix: string) {
    if (!("crmRateHit" in redis)) redis.defineCommand("crmRateHit", { lua: SCRIPT });
    this.#redis = redis as WithHit;
  }

  async hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    const window = windowOf(now);
    const keys = hits.map((h) => `${this.keyPrefix}rl:${window}:${h.name}`);
    const args = hits.map((h) => h.by);
    return await this.#redis.crmRateHit(keys.length, ...keys, ...args, 2 * WINDOW_MS);
  }
}
