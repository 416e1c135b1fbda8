/**
 * The site manifest across the three services that own its parts: the real
 * crm.admin.v1.SiteAdminService handlers of auth, content and ingest on one
 * PGlite database and one bus, each reached through Connect's in-memory
 * transport, driven by the command line's importManifest and exportManifest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { createLocalBus } from "../lib/bus.ts";
import type { Database } from "../lib/db/mod.ts";
import { reasonOf } from "../lib/errors.ts";
import { hashKey } from "../lib/keys.ts";
import { ManifestError } from "../lib/manifest/validate.ts";
import { authService } from "../auth/main.ts";
import { contentService } from "../content/main.ts";
import { ingestService } from "../ingest/main.ts";
import { type InMemoryService, inMemoryService } from "../../test/helpers/in_memory.ts";
import { readFixture } from "../../test/helpers/system.ts";
import { freshDatabase } from "../../test/helpers/storage.ts";
import { SITE_SERVICES, type SiteAdminClients } from "./admin_clients.ts";
import {
  exportManifest,
  ImportIncompleteError,
  importManifest,
  MANIFEST_ORDER,
  mergeManifestParts,
} from "./site_manifest.ts";

describe("site manifests across auth, content and ingest", () => {
  const bus = createLocalBus();
  let db: Database;
  let services: InMemoryService[];
  let clients: SiteAdminClients;
  // deno-lint-ignore no-explicit-any
  let fixture: any;

  beforeAll(async () => {
    db = (await freshDatabase("pglite")).db;
    services = [];
    for (const define of [authService, contentService, ingestService]) {
      services.push(await inMemoryService(define, { db, bus }));
    }
    const [auth, content, ingest] = services.map((s) => s.client(SiteAdminService));
    clients = { auth, content, ingest };
    fixture = await readFixture("contract-example.json");
  });
  afterAll(async () => {
    for (const service of services ?? []) await service.close();
    await bus.close();
    await db?.close();
  });

  it("imports the contract example once, changes nothing the second time, exports it back", async () => {
    const text = JSON.stringify(fixture);
    const first = await importManifest(clients, text);
    expect(first).toMatchObject({ site: "demo", changed: true });
    for (const service of SITE_SERVICES) {
      expect(Object.keys(first.changes[service]).length, service).toBeGreaterThan(0);
    }
    expect(await importManifest(clients, text)).toEqual({
      site: "demo",
      changed: false,
      changes: { auth: {}, content: {}, ingest: {} },
    });
    const exported = await exportManifest(clients, "demo");
    expect(exported.site).toEqual(fixture.site);
    expect(exported.siteKeys).toEqual(fixture.siteKeys.map(hashKey));
    expect(exported.eventTypes).toMatchObject([{ name: "signup" }]);
    // Every member, in the contract's order; webhooks and notifications, optional, only for a
    // site that has some.
    expect(Object.keys(exported)).toEqual(
      MANIFEST_ORDER.filter((m) => m !== "webhooks" && m !== "notifications"),
    );
  });

  it("refuses a manifest one service refuses on the dry run, storing nothing anywhere", async () => {
    const other = {
      ...fixture,
      site: { ...fixture.site, id: "other", domains: ["other.example"] },
    };
    const refused = await importManifest(clients, JSON.stringify(other)).catch((e) => e);
    expect(refused).toBeInstanceOf(ManifestError);
    expect([refused.path, refused.problem]).toEqual(["$.siteKeys[0]", "belongs to another site"]);
    for (const service of SITE_SERVICES) {
      const missing = await clients[service].exportSite({ siteId: "other" }).catch(reasonOf);
      expect(missing, service).toMatchObject({ code: Code.NotFound, reason: "site_not_found" });
    }
  });

  it("names who stored a manifest when a service fails mid-apply, and completes on the rerun", async () => {
    const shop = {
      site: { id: "shop", languages: ["en"], domains: ["shop.example"] },
      pages: [{ marker: "home", sections: [] }],
    };
    const text = JSON.stringify(shop);
    const down: SiteAdminClients = {
      ...clients,
      content: {
        ...clients.content,
        importSite: (request, options) =>
          request.dryRun
            ? clients.content.importSite(request, options)
            : Promise.reject(new ConnectError("content unreachable", Code.Unavailable)),
      },
    };
    const failed = await importManifest(down, text).catch((e) => e);
    expect(failed).toBeInstanceOf(ImportIncompleteError);
    expect([failed.applied, failed.pending]).toEqual([["auth"], ["content", "ingest"]]);
    expect(await clients.content.exportSite({ siteId: "shop" }).catch(reasonOf)).toMatchObject({
      reason: "site_not_found",
    });
    const rerun = await importManifest(clients, text);
    expect(rerun.changes.auth).toEqual({});
    expect(Object.keys(rerun.changes.content).length).toBeGreaterThan(0);
    expect(rerun.changed).toBe(true);
    expect((await exportManifest(clients, "shop")).pages).toMatchObject([{ marker: "home" }]);
  });
});

describe("mergeManifestParts", () => {
  it("puts the services' parts side by side, site members merged, in the contract's order", () => {
    const merged = mergeManifestParts([
      { site: { id: "demo", name: "Demo", domains: ["d.example"] }, siteKeys: [], secretKeys: [] },
      { site: { languages: ["en"] }, blog: {}, pages: [], sections: [], posts: [], webhooks: [] },
      { site: { timeZone: null }, eventTypes: [] },
    ]);
    expect(JSON.stringify(merged)).toBe(
      '{"site":{"id":"demo","name":"Demo","timeZone":null,"languages":["en"],' +
        '"domains":["d.example"]},"siteKeys":[],"secretKeys":[],"blog":{},"pages":[],' +
        '"sections":[],"posts":[],"eventTypes":[],"webhooks":[]}',
    );
  });
});
