import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

const start = (env: Record<string, string>) => loadConfig(env, "start");

describe("STATS_WORK_MEM_MB", () => {
  it("is 64 unless set; 0 leaves the server's setting", () => {
    expect(start({}).statsWorkMemMb).toBe(64);
    expect(start({ STATS_WORK_MEM_MB: "0" }).statsWorkMemMb).toBe(0);
    expect(start({ STATS_WORK_MEM_MB: "256" }).statsWorkMemMb).toBe(256);
  });

  it("refuses what is not a whole number of MB up to 4096, naming the setting", () => {
    for (const bad of ["-1", "4097", "64MB", "1.5"]) {
      expect(() => start({ STATS_WORK_MEM_MB: bad })).toThrow(ConfigError);
      expect(() => start({ STATS_WORK_MEM_MB: bad })).toThrow(/STATS_WORK_MEM_MB/);
    }
  });
});

describe("INGEST_THREAD", () => {
  it("is on unless set to off", () => {
    expect(start({}).ingestThread).toBe(true);
    expect(start({ INGEST_THREAD: "on" }).ingestThread).toBe(true);
    expect(start({ INGEST_THREAD: "off" }).ingestThread).toBe(false);
  });
});

describe("GATEWAY_THREAD", () => {
  it("is off unless set to on", () => {
    expect(start({}).gatewayThread).toBe(false);
    expect(start({ GATEWAY_THREAD: "on" }).gatewayThread).toBe(true);
    expect(start({ GATEWAY_THREAD: "off" }).gatewayThread).toBe(false);
  });

  it("refuses anything else, naming the setting", () => {
    expect(() => start({ GATEWAY_THREAD: "yes" })).toThrow(/GATEWAY_THREAD must be on or off/);
  });
});

describe("WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_INSECURE", () => {
  it("are off unless set to exactly 1", () => {
    expect(start({}).webhooks).toEqual({ allowPrivate: false, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_PRIVATE: "", WEBHOOK_ALLOW_INSECURE: "" }).webhooks)
      .toEqual({ allowPrivate: false, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_PRIVATE: "1" }).webhooks)
      .toEqual({ allowPrivate: true, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_INSECURE: "1" }).webhooks)
      .toEqual({ allowPrivate: false, allowInsecure: true });
  });

  it("refuse any other value, naming the setting", () => {
    for (const value of ["0", "true", "yes", " 1", "on"]) {
      expect(() => start({ WEBHOOK_ALLOW_PRIVATE: value }))
        .toThrow(new ConfigError(`WEBHOOK_ALLOW_PRIVATE must be 1 or unset, got "${value}"`));
      expect(() => start({ WEBHOOK_ALLOW_INSECURE: value }))
        .toThrow(/^WEBHOOK_ALLOW_INSECURE must be 1 or unset/);
    }
  });
});
