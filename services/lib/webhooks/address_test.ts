import { describe, expect, it } from "vitest";
import { refusedAddress } from "./address.ts";

describe("refusedAddress", () => {
  it("lets public unicast addresses pass", () => {
    for (const a of ["8.8.8.8", "93.184.215.14", "2606:4700::1111", "::ffff:8.8.4.4"]) {
      expect(refusedAddress(a), a).toBeUndefined();
    }
  });

  it("refuses loopback, private, link-local, unique-local and CGNAT, naming the range", () => {
    expect(refusedAddress("127.0.0.1")).toBe("address 127.0.0.1 is loopback");
    expect(refusedAddress("127.8.9.10")).toBe("address 127.8.9.10 is loopback");
    expect(refusedAddress("::1")).toBe("address ::1 is loopback");
    expect(refusedAddress("10.0.0.5")).toBe("address 10.0.0.5 is private");
    expect(refusedAddress("172.16.3.4")).toBe("address 172.16.3.4 is private");
    expect(refusedAddress("192.168.1.1")).toBe("address 192.168.1.1 is private");
    expect(refusedAddress("fe80::1")).toBe("address fe80::1 is link-local");
    expect(refusedAddress("fc00::7")).toBe("address fc00::7 is unique-local");
    expect(refusedAddress("100.64.0.1")).toBe("address 100.64.0.1 is carrier-grade NAT");
  });

  it("refuses the cloud metadata endpoints", () => {
    expect(refusedAddress("169.254.169.254")).toBe("address 169.254.169.254 is link-local");
    expect(refusedAddress("fd00:ec2::254")).toBe("address fd00:ec2::254 is unique-local");
  });

  it("judges an IPv4-mapped IPv6 address as its IPv4 address", () => {
    expect(refusedAddress("::ffff:127.0.0.1")).toBe("address ::ffff:127.0.0.1 is loopback");
    expect(refusedAddress("::ffff:7f00:1")).toBe("address ::ffff:7f00:1 is loopback");
    expect(refusedAddress("::ffff:169.254.169.254")).toMatch(/link-local$/);
    expect(refusedAddress("[::ffff:10.1.2.3]")).toMatch(/private$/);
  });

  it("refuses addresses that are no destination, or that wrap another address", () => {
    for (
      const a of [
        "0.0.0.0",
        "::",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
        "198.18.0.1",
        "192.0.2.1",
        "2001:db8::1",
        "2002:7f00:1::1",
        "64:ff9b::7f00:1",
        "2001:0:4136:e378::1",
      ]
    ) {
      expect(refusedAddress(a), a).toMatch(new RegExp(`^address \\S+ is `));
    }
    expect(refusedAddress("localhost")).toBe("localhost is not an IP address");
  });
});
