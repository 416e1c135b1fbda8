import { describe, expect, it } from "vitest";
import {
  consoleEnv,
  needsOtelRuntime,
  relaunchArgs,
  serviceNameEnv,
  traceTrustEnv,
  traceTrustProblem,
} from "./otel_runtime.ts";
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

describe("TRACE_TRUST_PARENT=0 and the runtime's propagators", () => {
  const untrusting = { TRACE_TRUST_PARENT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };

  it("are turned off in the relaunch of a process that serves the gateway", () => {
    expect(traceTrustEnv(untrusting, true)).toEqual({ OTEL_PROPAGATORS: "none" });
    expect(traceTrustEnv(untrusting, false)).toEqual({});
    expect(traceTrustEnv({ ...untrusting, TRACE_TRUST_PARENT: "1" }, true)).toEqual({});
    expect(traceTrustEnv({}, true)).toEqual({});
    // The operator's own choice is kept (and checked below).
    expect(traceTrustEnv({ ...untrusting, OTEL_PROPAGATORS: "baggage" }, true)).toEqual({});
  });

  it("refuse a runtime that would read traceparent itself", () => {
    const booted = { ...untrusting, OTEL_DENO: "true" };
    expect(traceTrustProblem(booted, true)).toMatch(
      /^TRACE_TRUST_PARENT=0 needs .*OTEL_PROPAGATORS/,
    );
    expect(traceTrustProblem({ ...booted, OTEL_PROPAGATORS: "tracecontext" }, true)).toBeDefined();
    expect(traceTrustProblem({ ...booted, OTEL_PROPAGATORS: "none" }, true)).toBeUndefined();
    expect(traceTrustProblem({ ...booted, OTEL_PROPAGATORS: "baggage" }, true)).toBeUndefined();
    expect(traceTrustProblem(booted, false)).toBeUndefined();
    expect(traceTrustProblem({ ...booted, TRACE_TRUST_PARENT: "1" }, true)).toBeUndefined();
    // Not booted with the exporter: the relaunch sets what is needed.
    expect(traceTrustProblem(untrusting, true)).toBeUndefined();
  });
});
