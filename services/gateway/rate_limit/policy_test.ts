import { describe, expect, it } from "vitest";
import { LocalCounter } from "./counter.ts";
import { RateLimiter } from "./policy.ts";

const limits = {
  contentPerIp: 300,
  contentPerKey: 600,
  invalidKeyPerIp: 20,
  marketingPerIp: 120,
  marketingPerSite: 6000,
  statsPerKey: 600,
};
const minute = 60_000;
const t0 = 1000 * minute;

async function repeat(n: number, fn: () => Promise<boolean>) {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

describe("content limits", () => {
  it("allows 300 requests per IP per minute and refuses the 301st", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    const results = await repeat(
      301,
      () => limiter.contentLimited({ ip: "1.1.1.1", validKey: "k", invalidKey: false }, t0),
    );
    expect(results.slice(0, 300).every((r) => !r)).toBe(true);
    expect(results[300]).toBe(true);
    // Another IP is unaffected.
    expect(await limiter.contentLimited({ ip: "2.2.2.2", validKey: "k2", invalidKey: false }, t0))
      .toBe(false);
  });

  it("allows 600 requests per key across IPs", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    let refused = 0;
    for (let i = 0; i < 601; i++) {
      if (
        await limiter.contentLimited(
          { ip: `10.0.${i % 3}.1`, validKey: "k", invalidKey: false },
          t0,
        )
      ) refused++;
    }
    expect(refused).toBe(1);
    expect(
      await limiter.contentLimited({ ip: "10.0.9.9", validKey: "other", invalidKey: false }, t0),
    ).toBe(false);
  });

  it("refuses an IP with more than 20 invalid keys, even with a valid key, until the minute ends", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    const bad = await repeat(
      21,
      () => limiter.contentLimited({ ip: "3.3.3.3", invalidKey: true }, t0),
    );
    expect(bad.slice(0, 20).every((r) => !r)).toBe(true);
    expect(bad[20]).toBe(true);
    expect(
      await limiter.contentLimited(
        { ip: "3.3.3.3", validKey: "k", invalidKey: false },
        t0 + 59_000,
      ),
    ).toBe(true);
    // The next window starts clean.
    expect(
      await limiter.contentLimited(
        { ip: "3.3.3.3", validKey: "k", invalidKey: false },
        t0 + minute,
      ),
    ).toBe(false);
  });

  it("resets windows at the start of each minute, not a minute after the first request", async () => {
    const limiter = new RateLimiter(new LocalCounter(), { ...limits, contentPerIp: 2 });
    const late = t0 + 59_000;
    expect(await limiter.contentLimited({ ip: "4.4.4.4", validKey: "k", invalidKey: false }, late))
      .toBe(false);
    expect(await limiter.contentLimited({ ip: "4.4.4.4", validKey: "k", invalidKey: false }, late))
      .toBe(false);
    expect(await limiter.contentLimited({ ip: "4.4.4.4", validKey: "k", invalidKey: false }, late))
      .toBe(true);
    expect(
      await limiter.contentLimited(
        { ip: "4.4.4.4", validKey: "k", invalidKey: false },
        t0 + minute,
      ),
    ).toBe(false);
  });
});

describe("marketing limits", () => {
  it("allows 120 per IP and 6000 per site a minute", async () => {
    const limiter = new RateLimiter(new LocalCounter(), { ...limits, marketingPerSite: 5 });
    const perIp = await repeat(121, () => limiter.marketingLimited({ ip: "5.5.5.5" }, t0));
    expect(perIp.filter(Boolean).length).toBe(1);
    expect(perIp[120]).toBe(true);
    const perSite = await repeat(
      6,
      () => limiter.marketingLimited({ ip: `6.6.6.${Math.random()}`, siteId: "demo" }, t0),
    );
    expect(perSite).toEqual([false, false, false, false, false, true]);
  });
});

describe("reports limits", () => {
  it("allows 600 queries per report key a minute, each key on its own", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    const first = await repeat(601, () => limiter.statsLimited("sha256:a", t0));
    expect(first.indexOf(true)).toBe(600);
    expect(await limiter.statsLimited("sha256:a", t0 + 10)).toBe(true);
    expect(await limiter.statsLimited("sha256:b", t0)).toBe(false);
    expect(await limiter.statsLimited("sha256:a", t0 + minute)).toBe(false);
  });
});

describe("refusals known without counting", () => {
  it("tells an IP refused for the rest of the minute, and only that IP", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    for (let i = 0; i < 21; i++) {
      await limiter.contentLimited({ ip: "9.9.9.9", invalidKey: true }, t0);
    }
    expect(limiter.contentIpRefused("9.9.9.9", t0)).toBe(true);
    expect(limiter.contentIpRefused("9.9.9.8", t0)).toBe(false);
    expect(limiter.contentIpRefused("9.9.9.9", t0 + minute)).toBe(false);
  });
});

describe("share link passwords", () => {
  it("locks a link for the rest of the minute after 10 wrong passwords, that link only", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    for (let i = 0; i < 9; i++) {
      expect(await limiter.sharePasswordLocked("sh_a", t0)).toBe(false);
      await limiter.sharePasswordWrong("sh_a", t0);
    }
    expect(await limiter.sharePasswordLocked("sh_a", t0)).toBe(false);
    await limiter.sharePasswordWrong("sh_a", t0);
    expect(await limiter.sharePasswordLocked("sh_a", t0)).toBe(true);
    expect(await limiter.sharePasswordLocked("sh_a", t0 + minute - 1)).toBe(true);
    expect(await limiter.sharePasswordLocked("sh_b", t0)).toBe(false);
    expect(await limiter.sharePasswordLocked("sh_a", t0 + minute)).toBe(false);
  });

  it("counts checking a lock as no wrong password", async () => {
    const limiter = new RateLimiter(new LocalCounter(), limits);
    for (let i = 0; i < 50; i++) await limiter.sharePasswordLocked("sh_a", t0);
    expect(await limiter.sharePasswordLocked("sh_a", t0)).toBe(false);
  });
});
