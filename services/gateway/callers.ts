/**
 * Who is calling: the gateway's cache of auth-service answers. A positive
 * answer is kept until the deadline auth-service gave (never past
 * KEY_CACHE_TTL_S from when it read storage); a refusal for a short while.
 * Key and domain changes arrive on the bus and drop entries at once.
 * Concurrent misses for the same key share one call.
 */
import type { Client } from "@connectrpc/connect";
import type { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import type { Bus } from "../lib/bus.ts";
import { hashKey, REPORT_KEY, SECRET_KEY, SITE_KEY } from "../lib/keys.ts";
import { reasonOf } from "../lib/errors.ts";
import { TtlCache } from "../lib/ttl_cache.ts";
import { hostOfOrigin } from "../lib/origin.ts";

export type Caller =
  | { ok: true; siteId: string }
  | { ok: false; reason: string };

const REFUSAL_TTL_MS = 5_000;
/** Hashes remembered per raw key: a SHA-256 per request is the hot path's largest cost. */
const MAX_HASHES = 10_000;

export class Callers {
  #cache = new TtlCache<string, Caller>({ maxEntries: 100_000 });
  #pending = new Map<string, Promise<Caller>>();
  #hashes = new Map<string, string>();
  #refusalTtlMs: number;

  constructor(private readonly auth: Client<typeof AuthService>, bus: Bus, keyCacheTtlS: number) {
    this.#refusalTtlMs = Math.min(REFUSAL_TTL_MS, keyCacheTtlS * 1000);
    bus.subscribe("key-changed", (hash) => this.#cache.delete(`key:${hash}`));
    bus.subscribe("origin-changed", (host) => this.#cache.delete(`host:${host}`));
  }

  /** The stored form of a key (its hash), remembered for keys seen lately. */
  hashOf(key: string): string {
    let hash = this.#hashes.get(key);
    if (hash === undefined) {
      // Keys are few per site; a flood of made-up keys only empties the memo.
      if (this.#hashes.size >= MAX_HASHES) this.#hashes.clear();
      hash = hashKey(key);
      this.#hashes.set(key, hash);
    }
    return hash;
  }

  /** Resolves a site key (pk_...); malformed keys are refused without a call. */
  siteKey(key: string): Promise<Caller> {
    if (!SITE_KEY.test(key)) return Promise.resolve({ ok: false, reason: "invalid_key" });
    return this.#resolve(`key:${this.hashOf(key)}`, async () => {
      const answer = await this.auth.resolveSiteKey({ key });
      return { siteId: answer.siteId, until: Number(answer.cacheUntilMs) };
    });
  }

  secretKey(key: string): Promise<Caller> {
    if (!SECRET_KEY.test(key)) return Promise.resolve({ ok: false, reason: "invalid_key" });
    return this.#resolve(`key:${this.hashOf(key)}`, async () => {
      const answer = await this.auth.resolveSecretKey({ key });
      return { siteId: answer.siteId, until: Number(answer.cacheUntilMs) };
    });
  }

  /** Resolves a report key (rk_...), which reads the reports of its site. */
  reportKey(key: string): Promise<Caller> {
    if (!REPORT_KEY.test(key)) return Promise.resolve({ ok: false, reason: "invalid_key" });
    return this.#resolve(`key:${this.hashOf(key)}`, async () => {
      const answer = await this.auth.resolveReportKey({ key });
      return { siteId: answer.siteId, until: Number(answer.cacheUntilMs) };
    });
  }

  /** Resolves the site of a page's Origin. */
  origin(origin: string): Promise<Caller> {
    const host = hostOfOrigin(origin);
    if (!host) return Promise.resolve({ ok: false, reason: "unknown_domain" });
    return this.#resolve(`host:${host}`, async () => {
      const answer = await this.auth.resolveOrigin({ origin });
      return { siteId: answer.siteId, until: Number(answer.cacheUntilMs) };
    });
  }

  #resolve(
    cacheKey: string,
    call: () => Promise<{ siteId: string; until: number }>,
  ): Promise<Caller> {
    const cached = this.#cache.get(cacheKey);
    if (cached) return Promise.resolve(cached);
    const pending = this.#pending.get(cacheKey);
    if (pending) return pending;
    const lookup = (async (): Promise<Caller> => {
      try {
        const { siteId, until } = await call();
        const caller: Caller = { ok: true, siteId };
        this.#cache.set(cacheKey, caller, until);
        return caller;
      } catch (error) {
        const reason = reasonOf(error);
        // Only a refusal is an answer; an outage must not be cached.
        if (!reason) throw error;
        const caller: Caller = { ok: false, reason: reason.reason };
        this.#cache.set(cacheKey, caller, Date.now() + this.#refusalTtlMs);
        return caller;
      } finally {
        this.#pending.delete(cacheKey);
      }
    })();
    this.#pending.set(cacheKey, lookup);
    return lookup;
  }
}
