/**
 * Who is calling: the gateway's cache of auth-service answers. A positive
 * answer is kept until the deadline auth-service gave (never past
 * KEY_CACHE_TTL_S from when it read storage); a refusal (a negative entry)
 * for a short while. Key and domain changes arrive on the bus and drop
 * entries at once. Concurrent misses for the same key share one call.
 */
import type { Client } from "@connectrpc/connect";
import type { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import type { Bus } from "../lib/bus.ts";
import { Cache, type Loaded } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import { hashKey, PREVIEW_KEY, REPORT_KEY, SECRET_KEY, SITE_KEY } from "../lib/keys.ts";
import { reasonOf } from "../lib/errors.ts";
import { hostOfOrigin } from "../lib/origin.ts";

export type Caller =
  | { ok: true; siteId: string }
  | { ok: false; reason: string };

const REFUSAL_TTL_MS = 5_000;
const MAX_CALLERS = 100_000;
/** Hashes remembered per raw key: a SHA-256 per request is the hot path's largest cost. */
const MAX_HASHES = 10_000;

const INVALID_KEY: Caller = { ok: false, reason: "invalid_key" };
const UNKNOWN_DOMAIN: Caller = { ok: false, reason: "unknown_domain" };

export interface CallersOptions {
  bus: Bus;
  clock: Clock;
  keyCacheTtlS: number;
}

export class Callers {
  /** Site ids by `key:<hash>` and `host:<host>`; undefined: refused. */
  #sites: Cache<string>;
  #hashes = new Map<string, string>();

  constructor(private readonly auth: Client<typeof AuthService>, options: CallersOptions) {
    this.#sites = new Cache<string>({
      name: "gateway.callers",
      maxEntries: MAX_CALLERS,
      clock: options.clock,
      // Positive answers carry auth-service's deadline.
      ttlMs: 0,
      missTtlMs: Math.min(REFUSAL_TTL_MS, options.keyCacheTtlS * 1000),
    });
    this.#sites.invalidateOn(options.bus, "key-changed", (hash) => `key:${hash}`);
    this.#sites.invalidateOn(options.bus, "origin-changed", (host) => `host:${host}`);
  }

  /** Stops listening to the bus. */
  close(): void {
    this.#sites.close();
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
    if (!SITE_KEY.test(key)) return Promise.resolve(INVALID_KEY);
    return this.#resolve(
      `key:${this.hashOf(key)}`,
      INVALID_KEY,
      () => refusedAsNone(this.auth.resolveSiteKey({ key })),
    );
  }

  secretKey(key: string): Promise<Caller> {
    if (!SECRET_KEY.test(key)) return Promise.resolve(INVALID_KEY);
    return this.#resolve(
      `key:${this.hashOf(key)}`,
      INVALID_KEY,
      () => refusedAsNone(this.auth.resolveSecretKey({ key })),
    );
  }

  /** Resolves a report key (rk_...), which reads the reports of its site. */
  reportKey(key: string): Promise<Caller> {
    if (!REPORT_KEY.test(key)) return Promise.resolve(INVALID_KEY);
    return this.#resolve(
      `key:${this.hashOf(key)}`,
      INVALID_KEY,
      () => refusedAsNone(this.auth.resolveReportKey({ key })),
    );
  }

  /** Resolves a preview key (pv_...), which reads its site's content, drafts too. */
  previewKey(key: string): Promise<Caller> {
    if (!PREVIEW_KEY.test(key)) return Promise.resolve(INVALID_KEY);
    return this.#resolve(
      `key:${this.hashOf(key)}`,
      INVALID_KEY,
      () => refusedAsNone(this.auth.resolvePreviewKey({ key })),
    );
  }

  /** Resolves the site of a page's Origin. */
  origin(origin: string): Promise<Caller> {
    const host = hostOfOrigin(origin);
    if (!host) return Promise.resolve(UNKNOWN_DOMAIN);
    return this.#resolve(
      `host:${host}`,
      UNKNOWN_DOMAIN,
      () => refusedAsNone(this.auth.resolveOrigin({ origin })),
    );
  }

  async #resolve(
    cacheKey: string,
    refusal: Caller,
    load: () => Promise<Loaded<string>>,
  ): Promise<Caller> {
    const siteId = await this.#sites.get(cacheKey, load);
    return siteId === undefined ? refusal : { ok: true, siteId };
  }
}

/**
 * auth-service's answer as a cache entry: the site until its deadline, or
 * none when it refused (invalid_key, unknown_domain). Any other failure is an
 * outage, which is thrown and not cached.
 */
async function refusedAsNone(
  call: Promise<{ siteId: string; cacheUntilMs: bigint }>,
): Promise<Loaded<string>> {
  try {
    const answer = await call;
    return { value: answer.siteId, until: Number(answer.cacheUntilMs) };
  } catch (error) {
    if (!reasonOf(error)) throw error;
    return { value: undefined };
  }
}
