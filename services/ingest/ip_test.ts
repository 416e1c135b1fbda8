import { describe, expect, it } from "vitest";
import { ipv6Groups, truncateIp } from "./ip.ts";

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
