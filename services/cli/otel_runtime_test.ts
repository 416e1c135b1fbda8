import { describe, expect, it } from "vitest";
import { consoleEnv, needsOtelRuntime, relaunchArgs, serviceNameEnv } from "./otel_runtime.ts";
import { V8_FLAGS_ARG } from "./v8_flags.ts";

describe("needsOtelRuntime", () => {
  it("relaunches only when an OTLP endpoint is set and the exporter is off", () => {
    expect(needsOtelRuntime({})).toBe(false);
    expect(needsOtelRuntime({ OTEL_SERVICE_NAME: "crm" })).toBe(false);
    expect(needsOtelRuntime({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBe(false);
    expect(needsOtelRuntime({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(needsOtelRuntime({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }))
      .toBe(true);
  });

  it("leaves an explicit choice alone", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(needsOtelRuntime({ ...endpoint, OTEL_DENO: "true" })).toBe(false);
    expect(needsOtelRuntime({ ...endpoint, OTEL_DENO: "false" })).toBe(false);
    expect(needsOtelRuntime({ ...endpoint, OTEL_SDK_DISABLED: "true" })).toBe(false);
  });
});

describe("serviceNameEnv", () => {
  it("names the process's own service unless the operator named one", () => {
    expect(serviceNameEnv({}, "crm-content")).toEqual({ OTEL_SERVICE_NAME: "crm-content" });
    expect(serviceNameEnv({ OTEL_SERVICE_NAME: "cms" }, "crm-content")).toEqual({});
    expect(
      serviceNameEnv({ OTEL_RESOURCE_ATTRIBUTES: "env=prod, service.name=cms" }, "crm-content"),
    ).toEqual({});
    expect(serviceNameEnv({ OTEL_RESOURCE_ATTRIBUTES: "env=prod" }, "crm")).toEqual({
      OTEL_SERVICE_NAME: "crm",
    });
  });
});

describe("consoleEnv", () => {
  it("exports console calls instead of printing them, unless the operator chose", () => {
    expect(consoleEnv({})).toEqual({ OTEL_DENO_CONSOLE: "replace" });
    expect(consoleEnv({ OTEL_DENO_CONSOLE: "capture" })).toEqual({});
    expect(consoleEnv({ OTEL_DENO_CONSOLE: "ignore" })).toEqual({});
  });
});

describe("relaunchArgs", () => {
  it("runs the same module with the same arguments and the system's V8 flags", () => {
    expect(relaunchArgs("file:///app/services/cli/service.ts", ["gateway"])).toEqual([
      "run",
      V8_FLAGS_ARG,
      "-A",
      "file:///app/services/cli/service.ts",
      "gateway",
    ]);
  });
});
