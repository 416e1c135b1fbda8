import { describe, expect, it } from "vitest";
import { type Config, ConfigError, loadConfig } from "./config.ts";

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

describe("on/off switches", () => {
  const switches = [
    { name: "STATS_UPKEEP", read: (c: Config) => c.statsUpkeep, fallback: true },
  ];

  it("take on or off, and their default when unset or empty", () => {
    for (const { name, read, fallback } of switches) {
      expect(read(start({}))).toBe(fallback);
      expect(read(start({ [name]: "" }))).toBe(fallback);
      expect(read(start({ [name]: "on" }))).toBe(true);
      expect(read(start({ [name]: "off" }))).toBe(false);
    }
  });

  it("refuse anything else, naming the setting and the value", () => {
    for (const { name } of switches) {
      for (const value of ["yes", "1", "true", "OFF", " on", "off "]) {
        expect(() => start({ [name]: value }))
          .toThrow(new ConfigError(`${name} must be one of on, off, got "${value}"`));
      }
    }
  });
});

describe("LOG_LEVEL", () => {
  it("is info unless set to one of the four levels", () => {
    expect(start({}).logLevel).toBe("info");
    for (const level of ["debug", "info", "warn", "error"] as const) {
      expect(start({ LOG_LEVEL: level }).logLevel).toBe(level);
    }
  });

  it("refuses any other spelling, naming the setting", () => {
    for (const value of ["INFO", "warning", "trace", " info"]) {
      expect(() => start({ LOG_LEVEL: value })).toThrow(ConfigError);
      expect(() => start({ LOG_LEVEL: value })).toThrow(/^LOG_LEVEL must be one of debug, info/);
    }
  });
});

describe("OpenTelemetry settings with a closed set of values", () => {
  const good: Record<string, string[]> = {
    OTEL_EXPORTER_OTLP_PROTOCOL: ["http/protobuf", "http/json"],
    OTEL_TRACES_SAMPLER: ["always_on", "parentbased_traceidratio", "traceidratio"],
    OTEL_DENO_CONSOLE: ["capture", "replace", "ignore"],
    OTEL_DENO: ["true", "false"],
    OTEL_SDK_DISABLED: ["true", "false"],
    OTEL_TRACES_SAMPLER_ARG: ["0", "0.1", "1", "1.0"],
  };
  const bad: Record<string, string[]> = {
    OTEL_EXPORTER_OTLP_PROTOCOL: ["grpc", "http/JSON", "json"],
    OTEL_TRACES_SAMPLER: ["ratio", "parentbased", "ALWAYS_ON"],
    OTEL_DENO_CONSOLE: ["replaced", "off"],
    OTEL_DENO: ["1", "yes", "TRUE"],
    OTEL_SDK_DISABLED: ["1", "on"],
    OTEL_TRACES_SAMPLER_ARG: ["1.5", "-0.1", "10%", "abc"],
  };

  it("accept the documented values", () => {
    for (const [name, values] of Object.entries(good)) {
      for (const value of values) expect(() => start({ [name]: value })).not.toThrow();
    }
  });

  it("refuse others at start, naming the setting", () => {
    for (const [name, values] of Object.entries(bad)) {
      for (const value of values) {
        expect(() => start({ [name]: value })).toThrow(ConfigError);
        expect(() => start({ [name]: value })).toThrow(new RegExp(`^${name} must be `));
      }
    }
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
