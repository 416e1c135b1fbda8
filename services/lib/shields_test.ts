import { describe, expect, it } from "vitest";
import {
  compileShield,
  hostListed,
  ipRange,
  pagePattern,
  parseReferrerBlocklist,
  referrerHost,
  type ShieldInput,
} from "./shields.ts";

const input = (over: Partial<ShieldInput>): ShieldInput => ({
  clientIp: "198.51.100.7",
  country: () => "DE",
  path: "/",
  referrerHost: undefined,
  ...over,
});

describe("ip ranges", () => {
  it("reads addresses and CIDR ranges of both families", () => {
    expect(ipRange("203.0.113.0/24")?.[1]).toBe(24);
    expect(ipRange("203.0.113.9")?.[1]).toBe(32);
    expect(ipRange("2001:db8::/32")?.[1]).toBe(32);
    expect(ipRange("2001:db8::1")?.[1]).toBe(128);
  });

  it("refuses what is not an address or range", () => {
    for (
      const bad of ["203.0.113.0/33", "2001:db8::/129", "10.1", "example.com", "1.2.3.4/x", ""]
    ) {
      expect(ipRange(bad), bad).toBeUndefined();
    }
  });

  it("drops addresses inside a range and keeps those outside", () => {
    const shield = compileShield(
      { ips: ["203.0.113.0/24", "2001:db8::/32", "192.0.2.1"], countries: [], pages: [] },
      new Set(),
    );
    expect(shield.reason(input({ clientIp: "203.0.113.200" }))).toBe("ip");
    expect(shield.reason(input({ clientIp: "::ffff:203.0.113.5" }))).toBe("ip");
    expect(shield.reason(input({ clientIp: "2001:db8:1::9" }))).toBe("ip");
    expect(shield.reason(input({ clientIp: "192.0.2.1" }))).toBe("ip");
    expect(shield.reason(input({ clientIp: "192.0.2.2" }))).toBeUndefined();
    expect(shield.reason(input({ clientIp: "203.0.114.1" }))).toBeUndefined();
    expect(shield.reason(input({ clientIp: "2001:db9::1" }))).toBeUndefined();
    expect(shield.reason(input({ clientIp: "" }))).toBeUndefined();
  });
});

describe("countries and pages", () => {
  it("drops a listed country, looking it up only when countries are shielded", () => {
    let lookups = 0;
    const country = () => (lookups++, "XX");
    expect(
      compileShield({ ips: [], countries: ["xx"], pages: [] }, new Set())
        .reason(input({ country })),
    ).toBe("country");
    expect(
      compileShield({ ips: [], countries: ["DE"], pages: [] }, new Set())
        .reason(input({ country })),
    ).toBeUndefined();
    expect(
      compileShield({ ips: [], countries: [], pages: [] }, new Set())
        .reason(input({ country })),
    ).toBeUndefined();
    expect(lookups).toBe(2);
    expect(
      compileShield({ ips: [], countries: ["DE"], pages: [] }, new Set())
        .reason(input({ country: () => null })),
    ).toBeUndefined();
  });

  it("matches whole paths, * as any run of characters and nothing else special", () => {
    expect(pagePattern("/admin*").test("/admin")).toBe(true);
    expect(pagePattern("/admin*").test("/admin/users/1")).toBe(true);
    expect(pagePattern("/admin*").test("/x/admin")).toBe(false);
    expect(pagePattern("/blog/*/edit").test("/blog/a/b/edit")).toBe(true);
    expect(pagePattern("/a.b").test("/axb")).toBe(false);
    expect(pagePattern("/exact").test("/exact/")).toBe(false);
    const shield = compileShield({ ips: [], countries: [], pages: ["/admin*"] }, new Set());
    expect(shield.reason(input({ path: "/admin/x" }))).toBe("page");
    expect(shield.reason(input({ path: "/pricing" }))).toBeUndefined();
    expect(shield.reason(input({ path: undefined }))).toBeUndefined();
  });
});

describe("the referrer block list", () => {
  it("reads one host a line, with comments and blank lines", () => {
    expect(parseReferrerBlocklist("# spam\nSpam.Example\n\n  bad.test  # trailing\n")).toEqual([
      "spam.example",
      "bad.test",
    ]);
    expect(() => parseReferrerBlocklist("ok.example\nhttp://x/y\n")).toThrow(/line 2/);
  });

  it("covers a name's subdomains, not names that merely end alike", () => {
    const names = new Set(["spam.example"]);
    expect(hostListed("spam.example", names)).toBe(true);
    expect(hostListed("a.b.SPAM.example", names)).toBe(true);
    expect(hostListed("notspam.example", names)).toBe(false);
    expect(hostListed("example", names)).toBe(false);
  });

  it("drops a referrer on the list, whatever the site's own shields", () => {
    const shield = compileShield({ ips: [], countries: [], pages: [] }, new Set(["spam.example"]));
    expect(shield.empty).toBe(true);
    expect(shield.reason(input({ referrerHost: referrerHost("https://x.spam.example/p?q") })))
      .toBe("referrer");
    expect(shield.reason(input({ referrerHost: referrerHost("https://ok.example/") })))
      .toBeUndefined();
    expect(referrerHost("not a url")).toBeUndefined();
    expect(referrerHost(null)).toBeUndefined();
  });
});
