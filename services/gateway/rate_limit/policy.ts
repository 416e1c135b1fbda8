/**
 * The limits of the specification as decisions over counters. Content API:
 * 300 requests per IP and 600 per site key a minute, and an IP that sent
 * more than 20 invalid-key requests in a minute is refused for the rest of
 * it, even with a valid key. Marketing routes: 120 per IP and 6000 per site a
 * minute, page views, events and leads together. Reports: 600 queries per
 * report key or share link a minute, and a share link that met 10 wrong
 * passwords in a minute is refused for the rest of it, whatever the password.
 * Counting happens before the decision, so the first request over a limit is
 * the first one refused.
 */
import type { RateLimits } from "../../lib/config.ts";
import type { CounterHit, WindowCounter } from "./counter.ts";
import { windowOf } from "./counter.ts";

/** Wrong passwords a share link takes in a minute; then it answers 429 until the minute ends. */
export const SHARE_PASSWORD_TRIES = 10;

export interface ContentCall {
  ip: string;
  /** Hash of a valid key; undefined when the key is missing or invalid. */
  validKey?: string;
  invalidKey: boolean;
}

export interface MarketingCall {
  ip: string;
  /** The site, when the route could tell it. */
  siteId?: string;
}

/**
 * Remembers, per window, callers already over a limit: they stay over until
 * the minute ends, so later requests are refused without counting.
 */
class Refusals {
  #window = -1;
  #names = new Set<string>();

  has(name: string, now: number): boolean {
    return windowOf(now) === this.#window && this.#names.has(name);
  }

  add(name: string, now: number) {
    const window = windowOf(now);
    if (window !== this.#window) {
      this.#window = window;
      this.#names = new Set();
    }
    this.#names.add(name);
  }
}

export class RateLimiter {
  #refused = new Refusals();

  constructor(private readonly counter: WindowCounter, private readonly limits: RateLimits) {}

  /**
   * True when this IP is already refused for the rest of the minute (over
   * its limit or its invalid keys), known here without counting: the request
   * is answered 429 whatever its key, so the key need not even be looked up.
   */
  contentIpRefused(ip: string, now: number): boolean {
    return this.#refused.has(`c:bad:${ip}`, now) || this.#refused.has(`c:ip:${ip}`, now);
  }

  /** True when the content request must be answered 429. */
  async contentLimited(call: ContentCall, now: number): Promise<boolean> {
    const ipName = `c:ip:${call.ip}`;
    const badName = `c:bad:${call.ip}`;
    const keyName = call.validKey ? `c:key:${call.validKey}` : undefined;
    if (this.#refused.has(badName, now) || this.#refused.has(ipName, now)) return true;
    if (keyName && this.#refused.has(keyName, now)) return true;
    const hits: CounterHit[] = [
      { name: ipName, by: 1 },
      { name: badName, by: call.invalidKey ? 1 : 0 },
    ];
    if (keyName) hits.push({ name: keyName, by: 1 });
    const [ip, bad, key] = await this.counter.hit(hits, now);
    if (bad > this.limits.invalidKeyPerIp) this.#refused.add(badName, now);
    if (ip > this.limits.contentPerIp) this.#refused.add(ipName, now);
    if (keyName && key > this.limits.contentPerKey) this.#refused.add(keyName, now);
    return bad > this.limits.invalidKeyPerIp || ip > this.limits.contentPerIp ||
      (keyName !== undefined && key > this.limits.contentPerKey);
  }

  /** True when the reports query (by a valid report key, given as its hash) must be answered 429. */
  async statsLimited(keyHash: string, now: number): Promise<boolean> {
    const name = `s:key:${keyHash}`;
    if (this.#refused.has(name, now)) return true;
    const [count] = await this.counter.hit([{ name, by: 1 }], now);
    if (count > this.limits.statsPerKey) this.#refused.add(name, now);
    return count > this.limits.statsPerKey;
  }

  /** True when the share link met SHARE_PASSWORD_TRIES wrong passwords this minute. */
  async sharePasswordLocked(id: string, now: number): Promise<boolean> {
    const name = `s:pw:${id}`;
    if (this.#refused.has(name, now)) return true;
    const [wrong] = await this.counter.hit([{ name, by: 0 }], now);
    if (wrong >= SHARE_PASSWORD_TRIES) this.#refused.add(name, now);
    return wrong >= SHARE_PASSWORD_TRIES;
  }

  /** Counts a wrong password given for the share link. */
  async sharePasswordWrong(id: string, now: number): Promise<void> {
    const name = `s:pw:${id}`;
    const [wrong] = await this.counter.hit([{ name, by: 1 }], now);
    if (wrong >= SHARE_PASSWORD_TRIES) this.#refused.add(name, now);
  }

  /** True when the marketing request must be answered 429. */
  async marketingLimited(call: MarketingCall, now: number): Promise<boolean> {
    const ipName = `m:ip:${call.ip}`;
    const siteName = call.siteId ? `m:site:${call.siteId}` : undefined;
    if (this.#refused.has(ipName, now) || (siteName && this.#refused.has(siteName, now))) {
      return true;
    }
    const hits: CounterHit[] = [{ name: ipName, by: 1 }];
    if (siteName) hits.push({ name: siteName, by: 1 });
    const [ip, site] = await this.counter.hit(hits, now);
    if (ip > this.limits.marketingPerIp) this.#refused.add(ipName, now);
    if (siteName && site > this.limits.marketingPerSite) this.#refused.add(siteName, now);
    return ip > this.limits.marketingPerIp ||
      (siteName !== undefined && site > this.limits.marketingPerSite);
  }
}
