import { describe, expect, it } from "vitest";
import { NO_GEO, openGeo } from "./geo.ts";

describe("openGeo", () => {
  const geo = openGeo(undefined);

  it("looks up countries of IPv4 and IPv6 addresses in the bundled database", () => {
    expect(geo.country("8.8.8.8")).toBe("US");
    expect(geo.country("81.2.69.142")).toBe("GB");
    expect(geo.country("2a00:1450:4001:80b::200e")).toBe("DE");
  });

  it("answers null for private, loopback and malformed addresses", () => {
    expect(geo.country("127.0.0.1")).toBeNull();
    expect(geo.country("10.1.2.3")).toBeNull();
    expect(geo.country("not an ip")).toBeNull();
  });

  it("can be turned off, and refuses a file it cannot read, naming the setting", () => {
    expect(openGeo("off")).toBe(NO_GEO);
    expect(() => openGeo("/nonexistent/file.mmdb")).toThrow(/GEOIP_DB/);
  });
});
