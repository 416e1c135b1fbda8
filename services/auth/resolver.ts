/**
 * Answers "which site is behind this key / this host?" from three levels:
 * this process's cache, Redis (shared by every replica), then Postgres. An
 * answer read from Postgres at time t is valid until t + KEY_CACHE_TTL_S at
 * every level, and callers receive that same deadline, so no cache anywhere
 * keeps a revoked key alive longer. Revocations also delete the Redis entry
 * and tell every replica through the bus, so they usually apply at once.
 */
import { TtlCache } from "../lib/ttl_cache.ts";
import type { Redis } from "../lib/redis.ts";
import type { Logger } from "../lib/log.ts";
import type { KeyKind } from "../lib/keys.ts";
import type { AuthStore } from "./storage.ts";

export interface Resolution {
  /** The site, or null when the key or host is unknown, revoked or of another kind. */
  siteId: string | null;
  /** Unix ms until which this answer may be reused. */
  until: number;
}

export interface ResolverOptions {
  ttlMs: number;
  redis?: Redis;
  /** Prefix of the Redis keys (REDIS_KEY_PREFIX). */
  keyPrefix: string;
  log: Logger;
  now?: () => number;
}

export class Resolver {
  #local = new TtlCache<string, Resolution>({ maxEntries: 50_000 });
  #store: AuthStore;
  #options: ResolverOptions;
  #now: () => number;

  constructor(store: AuthStore, options: ResolverOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  siteForKey(kind: KeyKind, keyHash: string): Promise<Resolution> {
    return this.#resolve(`key:${keyHash}`, async () => {
      const key = await this.#store.keyByHash(keyHash);
      return key && key.kind === kind && !key.revoked ? key.siteId : null;
    });
  }

  siteForHost(host: string): Promise<Resolution> {
    return this.#resolve(`host:${host}`, async () => (await this.#store.siteForHost(host)) ?? null);
  }

  /** Drops a key's cached answer here and in Redis (after a change to the key). */
  async forgetKey(keyHash: string): Promise<void> {
    await this.#forget(`key:${keyHash}`);
  }

  async forgetHost(host: string): Promise<void> {
    await this.#forget(`host:${host}`);
  }

  /** Drops only this process's copy (another replica already cleared Redis). */
  forgetLocal(kind: "key" | "host", id: string): void {
    this.#local.delete(`${kind}:${id}`);
  }

  #redisKey(cacheKey: string): string {
    return `${this.#options.keyPrefix}auth:${cacheKey}`;
  }

  async #forget(cacheKey: string) {
    this.#local.delete(cacheKey);
    try {
      await this.#options.redis?.del(this.#redisKey(cacheKey));
    } catch (error) {
      this.#options.log.warn("cannot clear a cached key in Redis; it expires by itself", { error });
    }
  }

  async #resolve(cacheKey: string, load: () => Promise<string | null>): Promise<Resolution> {
    const now = this.#now();
    const local = this.#local.get(cacheKey);
    if (local) return local;
    const { redis, ttlMs, log } = this.#options;
    if (redis) {
      try {
        const raw = await redis.get(this.#redisKey(cacheKey));
        if (raw) {
          const shared = JSON.parse(raw) as Resolution;
          if (shared.until > now) {
            this.#local.set(cacheKey, shared, shared.until);
            return shared;
          }
        }
      } catch (error) {
        log.debug("redis read failed; asking storage", { error });
      }
    }
    const resolution: Resolution = { siteId: await load(), until: now + ttlMs };
    if (ttlMs > 0) {
      this.#local.set(cacheKey, resolution, resolution.until);
      if (redis) {
        redis.set(this.#redisKey(cacheKey), JSON.stringify(resolution), "PX", ttlMs).catch(
          (error: Error) => log.debug("redis write failed", { error }),
        );
      }
    }
    return resolution;
  }
}
