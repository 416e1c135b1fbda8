import { describe, expect, it } from "vitest";
import { clientIp } from "./client_ip.ts";

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
