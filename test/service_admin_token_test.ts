/**
 * `deno task service` on an address other machines reach refuses to start
 * without ADMIN_TOKEN (the admin RPCs would be open to the network), and
 * starts on loopback without it or anywhere with it. The refusal comes before
 * storage is needed, so the runs without DATABASE_URL stop at the next check,
 * which shows the token check was passed.
 */
import { describe, expect, it } from "vitest";
import { runTask } from "./helpers/process.ts";

const NO_STORAGE = { DATABASE_URL: "", REDIS_URL: "" };

describe("deno task service and ADMIN_TOKEN", { timeout: 60_000 }, () => {
  it("refuses to listen on a reachable address without ADMIN_TOKEN", async () => {
    for (
      const [service, host] of [["content", "0.0.0.0"], ["auth", "::"], ["ingest", "10.1.2.3"]]
    ) {
      const run = await runTask(["service", service], { ...NO_STORAGE, HOST: host });
      expect(run.code, run.stderr).not.toBe(0);
      expect(run.stderr).toContain("set ADMIN_TOKEN");
      expect(run.stderr).not.toContain("needs DATABASE_URL");
    }
  });

  it("passes the check on loopback without a token, and anywhere with one", async () => {
    for (
      const env of <Record<string, string>[]> [
        { HOST: "127.0.0.1" },
        { HOST: "::1" },
        { HOST: "0.0.0.0", ADMIN_TOKEN: "a-long-operator-token" },
      ]
    ) {
      const run = await runTask(["service", "content"], { ...NO_STORAGE, ...env });
      expect(run.code).not.toBe(0);
      expect(run.stderr, JSON.stringify(env)).toContain("needs DATABASE_URL");
      expect(run.stderr).not.toContain("set ADMIN_TOKEN");
    }
  });

  it("lets the gateway, which serves no admin RPC, listen anywhere without one", async () => {
    const run = await runTask(["service", "gateway"], { ...NO_STORAGE, HOST: "0.0.0.0" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("gateway needs REDIS_URL");
  });
});
