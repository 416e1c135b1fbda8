/**
 * Answers "which site is behind this key / this host?" from three levels:
 * this process's cache, Redis (shared by every replica), then Postgres. An
 * answer read from Postgres at time t is valid until t + KEY_CACHE_TTL_S at
 * every level, and callers receive that same deadline, so no cache anywhere
 * keeps a revoked key alive longer. Revocations also delete the Redis entry
 * and tell every replica through the bus, so they usually apply at once.
 * Concurrent lookups of one key or host share one read.
 */
import type { Bus } from "../lib/bus.ts";
import { Cache } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import type { Redis } from "../lib/redis.ts";
import type { Logger } from "../lib/log.ts";
import type { KeyKind } from "../lib/keys.ts";
import type { AuthStore } from "./storage.ts";
import type { ShareStore } from "./share_store.ts";

export interface Resolution {
  /** The site, or null when the key or host is unknown, revoked or of another kind. */
  siteId: string | null;
  /** Unix ms until which this answer may be reused. */
  until: number;
  /** A live share link's password hash (null: none) and its site's embed origins. */
  share?: { passwordHash: string | null; embedOrigins: string[] };
}

export interface ResolverOptions {
  ttlMs: number;
  redis?: Redis;
  /** Prefix of the Redis keys (REDIS_KEY_PREFIX). */
  keyPrefix: string;
  log: Logger;
  clock: Clock;
  /** Key and domain changes made through any replica drop this process's copy. */
  bus: Bus;
}

const MAX_LOCAL = 50_000;

export class Resolver {
  #local: Cache<Resolution>;
  #store: AuthStore;
  #shares: ShareStore;
  #options: ResolverOptions;

  constructor(store: AuthStore, shares: ShareStore, options: ResolverOptions) {
    this.#store = store;
    this.#shares = shares;
    this.#options = options;
    // Every answer carries its own deadline (`until`), the same at every level.
    this.#local = new Cache<Resolution>({
      name: "auth.keys",
      maxEntries: MAX_LOCAL,
      clock: options.clock,
      ttlMs: 0,
    });
    this.#local.invalidateOn(options.bus, "key-changed", (hash) => `key:${hash}`);
    this.#local.invalidateOn(options.bus, "origin-changed", (host) => `host:${host}`);
  }

  close(): void {
    this.#local.close();
  }

  siteForKey(kind: KeyKind, keyHash: string): Promise<Resolution> {
    return this.#resolve(`key:${keyHash}`, async () => {
      const key = await this.#store.keyByHash(keyHash);
      return { siteId: key && key.kind === kind && !key.revoked ? key.siteId : null };
    });
  }

  siteForHost(host: string): Promise<Resolution> {
    return this.#resolve(`host:${host}`, async () => ({
      siteId: (await this.#store.siteForHost(host)) ?? null,
    }));
  }

  /**
   * A share link, while it is neither revoked nor expired: cached as keys
   * are (its revocation publishes key-changed with its id), and never past
   * its expiry. Kept in this process only: the entry holds the password's
   * hash, which goes nowhere but here.
   */
  shareLink(id: string): Promise<Resolution> {
    return this.#resolve(`key:${id}`, async () => {
      const link = await this.#shares.link(id);
      const now = this.#options.clock.now();
      if (!link || link.revokedAt !== null || (link.expiresAt !== null && link.expiresAt <= now)) {
        return { siteId: null };
      }
      return {
        siteId: link.siteId,
        until: link.expiresAt ?? undefined,
        share: {
          passwordHash: link.passwordHash,
          embedOrigins: await this.#shares.embedOrigins(link.siteId),
        },
      };
    }, { shared: false });
  }

  /** Drops a key's cached answer here and in Redis (after a change to the key). */
  async forgetKey(keyHash: string): Promise<void> {
    await this.#forget(`key:${keyHash}`);
  }

  async forgetHost(host: string): Promise<void> {
    await this.#forget(`host:${host}`);
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

  async #resolve(
    cacheKey: string,
    load: () => Promise<Omit<Resolution, "until"> & { until?: number }>,
    { shared: viaRedis = true } = {},
  ): Promise<Resolution> {
    const resolution = await this.#local.get(cacheKey, async () => {
      const shared = viaRedis ? await this.#shared(cacheKey) : undefined;
      if (shared) return { value: shared, until: shared.until };
      const now = this.#options.clock.now();
      const { redis, ttlMs, log } = this.#options;
      const loaded = await load();
      const read: Resolution = {
        ...loaded,
        until: Math.min(now + ttlMs, loaded.until ?? Infinity),
      };
      if (viaRedis && ttlMs > 0 && redis) {
        redis.set(this.#redisKey(cacheKey), JSON.stringify(read), "PX", ttlMs).catch(
          (error: Error) => log.debug("redis write failed", { error }),
        );
      }
      return { value: read, until: read.until };
    });
    return resolution!;
  }

  /** Another replica's answer from Redis, while it holds. */
  async #shared(cacheKey: string): Promise<Resolution | undefined> {
    const { redis, clock, log } = this.#options;
    if (!redis) return undefined;
    try {
      const raw = await redis.get(this.#redisKey(cacheKey));
      if (!raw) return undefined;
      const shared = JSON.parse(raw) as Resolution;
      return shared.until > clock.now() ? shared : undefined;
    } catch (error) {
      log.debug("redis read failed; asking storage", { error });
      return undefined;
    }
  }
}
