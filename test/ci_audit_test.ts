/** The offline dependency audit (.ci/audit.ts) finds what its list names, and only that. */
import { describe, expect, it } from "vitest";
import { type Advisory, audit, compareVersions, inRange, lockedPackages } from "../.ci/audit.ts";
import { runCommand } from "./helpers/process.ts";

const DEBUG: Advisory = {
  id: "X-1",
  package: "debug",
  affected: ["=4.4.2", ">=4.0.0 <4.3.1"],
  summary: "test",
  source: "test",
};

describe("the offline dependency audit", () => {
  it("reads name and version from deno.lock keys, scoped and with peer suffixes", () => {
    expect(
      lockedPackages({
        npm: {
          "debug@4.4.3": {},
          "@grpc/grpc-js@1.14.7": {},
          "vite@8.3.8_yaml@2.8.1": {},
          "@connectrpc/connect@2.2.0_@bufbuild+protobuf@2.17.0": {},
        },
      }),
    ).toEqual([
      ["debug", "4.4.3"],
      ["@grpc/grpc-js", "1.14.7"],
      ["vite", "8.3.8"],
      ["@connectrpc/connect", "2.2.0"],
    ]);
  });

  it("compares versions and ranges as semver does for plain versions", () => {
    expect(compareVersions("1.10.0", "1.9.15")).toBe(1);
    expect(compareVersions("2.0.0-5", "2.0.0")).toBe(-1);
    expect(inRange("1.9.14", ">=1.9.0 <1.9.15")).toBe(true);
    expect(inRange("1.9.15", ">=1.9.0 <1.9.15")).toBe(false);
    expect(inRange("4.4.2", "=4.4.2")).toBe(true);
    expect(inRange("4.4.3", "=4.4.2")).toBe(false);
  });

  it("flags an affected version unless the allow-list names it, and reports stale entries", () => {
    const packages: [string, string][] = [["debug", "4.4.2"], ["debug", "4.4.3"], ["ms", "2.1.3"]];
    const flagged = audit(packages, [DEBUG], []);
    expect(flagged.findings.map((f) => [f.version, f.allowed])).toEqual([["4.4.2", undefined]]);
    const allowed = { id: "X-1", package: "debug", version: "4.4.2", reason: "test" };
    const stale = { id: "X-1", package: "debug", version: "4.0.1", reason: "gone" };
    const excused = audit(packages, [DEBUG], [allowed, stale]);
    expect(excused.findings[0].allowed).toBe(allowed);
    expect(excused.stale).toEqual([stale]);
  });

  it("passes on this repository's deno.lock with its committed lists", async () => {
    const run = await runCommand("deno", ["run", "--allow-read", ".ci/audit.ts"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\d+ npm packages, 0 findings, 0 not allowed/);
  });
});
