/**
 * `deno task service` on an address other machines reach refuses to start
 * without ADMIN_TOKEN (the admin RPCs would be open to the network), and
 * starts on loopback without it or anywhere with it. The refusal comes before
 * storage is needed, so the runs without DATABASE_URL stop at the next check,
 * which shows the token check was passed. With ADMIN_TOKEN set, every admin
 * service of every service refuses a call without it or with a wrong one
 * (the comparison itself, constant-time, is in services/lib/rpc/interceptors.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { runTask } from "./helpers/process.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { serviceClient } from "../services/lib/rpc/client.ts";
import { SiteAdminService } from "../services/lib/gen/crm/admin/v1/site_admin_pb.ts";
import { AuthAdminService } from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import { IngestAdminService } from "../services/lib/gen/crm/ingest/v1/ingest_pb.ts";
import { Health } from "../services/lib/gen/grpc/health/v1/health_pb.ts";
import { WebhookAdminService } from "../services/lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import { MailAdminService } from "../services/lib/gen/crm/mail/v1/mail_pb.ts";

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

  it("takes the token from ADMIN_TOKEN_FILE, and refuses it given both ways", async () => {
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(file, "a-long-operator-token\n");
      const env = { ...NO_STORAGE, HOST: "0.0.0.0", ADMIN_TOKEN_FILE: file };
      const run = await runTask(["service", "content"], env);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain("needs DATABASE_URL");
      expect(run.stderr).not.toContain("set ADMIN_TOKEN");
      const both = await runTask(["service", "content"], { ...env, ADMIN_TOKEN: "another" });
      expect(both.code).not.toBe(0);
      expect(both.stderr).toContain("set ADMIN_TOKEN or ADMIN_TOKEN_FILE, not both");
    } finally {
      await Deno.remove(file);
    }
  });

  it("lets the gateway, which serves no admin RPC, listen anywhere without one", async () => {
    const run = await runTask(["service", "gateway"], { ...NO_STORAGE, HOST: "0.0.0.0" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("gateway needs REDIS_URL");
  });
});

describe("admin RPCs with ADMIN_TOKEN set", () => {
  const TOKEN = "operator-token-0123456789";
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { ADMIN_TOKEN: TOKEN } });
  }, 60_000);

  afterAll(async () => {
    await sys?.close();
  });

  /** One harmless call per admin service each service mounts, with the given token (or none). */
  function calls(adminToken?: string): [string, () => Promise<unknown>][] {
    const { authUrl, contentUrl, ingestUrl } = sys.config;
    const options = { adminToken };
    const site = (url: string) => serviceClient(SiteAdminService, url, options);
    return [
      ["auth SiteAdminService", () => site(authUrl).migrate({})],
      ["content SiteAdminService", () => site(contentUrl).migrate({})],
      ["ingest SiteAdminService", () => site(ingestUrl).migrate({})],
      ["AuthAdminService", () => serviceClient(AuthAdminService, authUrl, options).listSites({})],
      [
        "IngestAdminService",
        () =>
          serviceClient(IngestAdminService, ingestUrl, options).exportEvents({ siteId: "none" }),
      ],
      [
        "MailAdminService",
        () => serviceClient(MailAdminService, ingestUrl, options).sendReports({ siteId: "none" }),
      ],
      ...[["content", contentUrl], ["ingest", ingestUrl]].map(([name, url]) =>
        [
          `${name} WebhookAdminService`,
          () => serviceClient(WebhookAdminService, url, options).listAttempts({ siteId: "none" }),
        ] as [string, () => Promise<unknown>]
      ),
    ];
  }

  it("refuses every admin call without the token or with a wrong one", async () => {
    for (const token of [undefined, "wrong", TOKEN.slice(0, -1), `${TOKEN}x`]) {
      for (const [name, call] of calls(token)) {
        const refused = await call().then(() => undefined, (error) => error);
        expect(refused, `${name} with ${token}`).toBeInstanceOf(ConnectError);
        expect(refused.code, `${name} with ${token}`).toBe(Code.Unauthenticated);
      }
    }
  });

  it("lets every admin call through with the token", async () => {
    for (const [name, call] of calls(TOKEN)) {
      // Past the token the service answers: a result, or its own refusal (no such site).
      const outcome = await call().then(() => "answered", (error) => error);
      if (outcome !== "answered") {
        expect(outcome, name).toBeInstanceOf(ConnectError);
        expect(outcome.code, name).toBe(Code.NotFound);
      }
    }
  });

  it("keeps the services the gateway calls open without the token", async () => {
    const health = serviceClient(Health, sys.config.contentUrl);
    expect((await health.check({ service: "" })).status).toBe(1); // SERVING
  });
});
