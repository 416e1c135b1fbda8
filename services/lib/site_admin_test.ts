import { describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { SiteAdminService } from "./gen/crm/admin/v1/site_admin_pb.ts";
import { reasonOf } from "./errors.ts";
import { createLogger } from "./log.ts";
import { invalidManifest } from "./manifest/refuse.ts";
import type { Manifest } from "./manifest/types.ts";
import { serverInterceptors } from "./rpc/interceptors.ts";
import type { ServiceContext } from "./service_runtime.ts";
import { siteAdminHandlers, type SitePart } from "./site_admin.ts";

const MANIFEST = JSON.stringify({
  site: { id: "shop", languages: ["en"], domains: ["shop.example"] },
});

/** A service part that records what it was asked; `refuse` makes its check fail. */
function recordingPart(refuse = false) {
  const calls: string[] = [];
  const part: SitePart = {
    check(manifest: Manifest) {
      calls.push(`check ${manifest.site.id}`);
      if (refuse) throw invalidManifest("$.siteKeys[0]", "belongs to another site");
      return Promise.resolve();
    },
    apply(manifest: Manifest) {
      calls.push(`apply ${manifest.site.id}`);
      return Promise.resolve({ site: 1 });
    },
    export(siteId: string) {
      return Promise.resolve(siteId === "shop" ? { site: { id: "shop" } } : undefined);
    },
  };
  return { part, calls };
}

const context = {
  migrateRpc: () => Promise.resolve({ appliedVersions: [1, 2], currentVersion: 2 }),
  platform: { config: { webhooks: { allowPrivate: false, allowInsecure: false } } },
} as unknown as ServiceContext;

function client(
  part: SitePart,
  options: { adminToken?: string; adminTokenNext?: string; bearer?: string } = {},
) {
  const transport = createRouterTransport(
    (router) => router.service(SiteAdminService, siteAdminHandlers(context, part)),
    {
      router: {
        interceptors: serverInterceptors({
          log: createLogger("error", {}, () => {}),
          adminToken: options.adminToken,
          adminTokenNext: options.adminTokenNext,
        }),
      },
    },
  );
  const headers = options.bearer ? { authorization: `Bearer ${options.bearer}` } : undefined;
  const site = createClient(SiteAdminService, transport);
  return {
    importSite: (manifestJson: string, dryRun: boolean) =>
      site.importSite({ manifestJson, dryRun }, { headers }),
    exportSite: (siteId: string) => site.exportSite({ siteId }, { headers }),
    migrate: () => site.migrate({}, { headers }),
  };
}

describe("SiteAdminService", () => {
  it("checks on a dry run and writes nothing; applies (checking inside) on an import", async () => {
    const { part, calls } = recordingPart();
    const admin = client(part);
    expect(await admin.importSite(MANIFEST, true)).toMatchObject({ siteId: "shop", changes: {} });
    expect(calls).toEqual(["check shop"]);
    expect(await admin.importSite(MANIFEST, false)).toMatchObject({ changes: { site: 1 } });
    expect(calls).toEqual(["check shop", "apply shop"]);
  });

  it("refuses a manifest the validator or the service's check refuses, naming the path", async () => {
    const { part, calls } = recordingPart(true);
    const admin = client(part);
    const refused = await admin.importSite(MANIFEST, true).catch(reasonOf);
    expect(refused).toMatchObject({
      reason: "invalid_manifest",
      fields: { path: "$.siteKeys[0]", problem: "belongs to another site" },
    });
    expect(calls).toEqual(["check shop"]);
    const malformed = await admin.importSite('{"site":{"id":"No"}}', true).catch(reasonOf);
    expect(malformed).toMatchObject({ reason: "invalid_manifest", fields: { path: "$.site.id" } });
  });

  it("exports the service's part as a manifest document, or site_not_found", async () => {
    const admin = client(recordingPart().part);
    expect(JSON.parse((await admin.exportSite("shop")).manifestJson)).toEqual({
      site: { id: "shop" },
    });
    const missing = await admin.exportSite("nope").catch(reasonOf);
    expect(missing).toMatchObject({
      code: Code.NotFound,
      reason: "site_not_found",
      fields: { siteId: "nope" },
    });
  });

  it("migrates through the service's own migrations", async () => {
    expect(await client(recordingPart().part).migrate()).toMatchObject({
      appliedVersions: [1, 2],
      currentVersion: 2,
    });
  });

  it("needs ADMIN_TOKEN as a bearer token when it is set", async () => {
    const { part } = recordingPart();
    const refused = await client(part, { adminToken: "t0k" }).migrate().catch((e) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect(refused.code).toBe(Code.Unauthenticated);
    const wrong = await client(part, { adminToken: "t0k", bearer: "nope" }).migrate().catch((e) =>
      e
    );
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect((await client(part, { adminToken: "t0k", bearer: "t0k" }).migrate()).currentVersion)
      .toBe(2);
  });

  it("takes ADMIN_TOKEN_NEXT beside ADMIN_TOKEN while the token is rotated", async () => {
    const { part } = recordingPart();
    const rotating = { adminToken: "old-t0k", adminTokenNext: "new-t0k" };
    for (const bearer of ["old-t0k", "new-t0k"]) {
      expect((await client(part, { ...rotating, bearer }).migrate()).currentVersion, bearer)
        .toBe(2);
    }
    for (const bearer of [undefined, "nope", "old-t0knew-t0k", "new-t0"]) {
      const refused = await client(part, { ...rotating, bearer }).migrate().catch((e) => e);
      expect(refused, String(bearer)).toBeInstanceOf(ConnectError);
      expect(refused.code).toBe(Code.Unauthenticated);
    }
  });
});
