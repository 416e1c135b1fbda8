import { describe, expect, it } from "vitest";
import { clientIp, ipv6Groups, isLoopbackHost, truncateIp } from "./ip.ts";

describe("truncateIp", () => {
  it("sets the last number of an IPv4 address to 0", () => {
    expect(truncateIp("203.0.113.77")).toBe("203.0.113.0");
    expect(truncateIp("8.8.8.8")).toBe("8.8.8.0");
  });

  it("cuts IPv6 to the /48 network", () => {
    expect(truncateIp("2001:db8:85a3:8d3:1319:8a2e:370:7348")).toBe("2001:db8:85a3::");
    expect(truncateIp("2a00:1450:4001:80b::200e")).toBe("2a00:1450:4001::");
    expect(truncateIp("2001:db8::1")).toBe("2001:db8::");
    expect(truncateIp("2001:0:5:ffff::1")).toBe("2001:0:5::");
    expect(truncateIp("::1")).toBe("::");
  });

  it("treats IPv4-mapped IPv6 as IPv4", () => {
    expect(truncateIp("::ffff:198.51.100.9")).toBe("198.51.100.0");
  });

  it("answers null for what is not an address", () => {
    expect(truncateIp("")).toBeNull();
    expect(truncateIp("300.1.1.1")).toBeNull();
    expect(truncateIp("1:2:3")).toBeNull();
    expect(truncateIp("example.com")).toBeNull();
    expect(ipv6Groups("1::2::3")).toBeUndefined();
  });
});

describe("clientIp", () => {
  it("uses the socket address without trusted proxies", () => {
    expect(clientIp("10.0.0.9", "1.2.3.4", 0)).toBe("10.0.0.9");
  });

  it("takes the entry TRUST_PROXY places from the right", () => {
    expect(clientIp("10.0.0.9", "6.6.6.6, 1.2.3.4", 1)).toBe("1.2.3.4");
    expect(clientIp("10.0.0.9", "6.6.6.6, 1.2.3.4, 10.0.0.2", 2)).toBe("1.2.3.4");
  });

  it("takes the leftmost entry when the header is shorter than the proxy count", () => {
    expect(clientIp("10.0.0.9", "1.2.3.4", 3)).toBe("1.2.3.4");
  });

  it("falls back to the socket on a missing or malformed header", () => {
    expect(clientIp("10.0.0.9", null, 1)).toBe("10.0.0.9");
    expect(clientIp("10.0.0.9", "not-an-ip", 1)).toBe("10.0.0.9");
    expect(clientIp("10.0.0.9", "999.1.1.1", 1)).toBe("10.0.0.9");
  });

  it("normalises IPv4-mapped IPv6 and IPv6 case", () => {
    expect(clientIp("::ffff:127.0.0.1", null, 0)).toBe("127.0.0.1");
    expect(clientIp("10.0.0.9", "2001:DB8::1", 1)).toBe("2001:db8::1");
  });
});

describe("isLoopbackHost", () => {
  it("is true for addresses only this machine reaches", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it("is false for every address others can reach, the wildcard ones included", () => {
    for (
      const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.1", "::2", "128.0.0.1", "example.com"]
    ) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
