/**
 * auth-service's handlers through Connect's in-memory transport on PGlite:
 * key and origin resolution, the key commands, its part of a site import and
 * their typed errors (Code and ErrorDetail), as the gateway and `admin` see them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, Code } from "@connectrpc/connect";
import { AuthAdminService, AuthService, KeyKind } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { ManualClock } from "../lib/clock.ts";
import { reasonOf } from "../lib/errors.ts";
import { hashKey } from "../lib/keys.ts";
import { type InMemoryService, inMemoryService } from "../../test/helpers/in_memory.ts";
import { authService } from "./main.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const REPORT_KEY = "rk_" + "ab".repeat(24);
const PREVIEW_KEY = "pv_" + "cd".repeat(16);
const TOKEN = "t0ken";
const TTL_S = 60;

const manifest = (site: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    site: { id: site, name: `Site ${site}`, languages: ["en"], domains: [`${site}.example`] },
    ...extra,
  });
const DEMO = manifest("demo", {
  siteKeys: [SITE_KEY],
  secretKeys: [SECRET_KEY],
  reportKeys: [REPORT_KEY],
  previewKeys: [PREVIEW_KEY],
});

describe("auth-service through an in-memory transport", () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  let service: InMemoryService;
  let auth: Client<typeof AuthService>;
  let admin: Client<typeof AuthAdminService>;
  let site: Client<typeof SiteAdminService>;

  beforeAll(async () => {
    service = await inMemoryService(authService, {
      clock,
      env: { ADMIN_TOKEN: TOKEN, KEY_CACHE_TTL_S: String(TTL_S) },
    });
    auth = service.client(AuthService);
    admin = service.client(AuthAdminService, { adminToken: TOKEN });
    site = service.client(SiteAdminService, { adminToken: TOKEN });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("stores nothing on a dry run, then the site, its domains and its keys", async () => {
    expect(await site.importSite({ manifestJson: DEMO, dryRun: true })).toMatchObject({
      siteId: "demo",
      changes: {},
    });
    expect(reasonOf(await auth.resolveSiteKey({ key: SITE_KEY }).catch((e) => e))?.reason).toBe(
      "invalid_key",
    );
    const applied = await site.importSite({ manifestJson: DEMO });
    expect(applied.siteId).toBe("demo");
    expect(Object.keys(applied.changes).length).toBeGreaterThan(0);
    expect((await site.importSite({ manifestJson: DEMO })).changes).toEqual({});
    expect(JSON.parse((await site.exportSite({ siteId: "demo" })).manifestJson)).toEqual({
      site: { id: "demo", name: "Site demo", domains: ["demo.example"] },
      siteKeys: [hashKey(SITE_KEY)],
      secretKeys: [hashKey(SECRET_KEY)],
      reportKeys: [hashKey(REPORT_KEY)],
      previewKeys: [hashKey(PREVIEW_KEY)],
    });
  });

  it("resolves each kind of key to its site until the cache deadline", async () => {
    const until = BigInt(clock.now() + TTL_S * 1000);
    expect(await auth.resolveSiteKey({ key: SITE_KEY })).toMatchObject({
      siteId: "demo",
      cacheUntilMs: until,
    });
    expect((await auth.resolveSecretKey({ key: SECRET_KEY })).siteId).toBe("demo");
    expect((await auth.resolveReportKey({ key: REPORT_KEY })).siteId).toBe("demo");
    expect((await auth.resolvePreviewKey({ key: PREVIEW_KEY })).siteId).toBe("demo");
    expect(await auth.resolveOrigin({ origin: "https://demo.example" })).toMatchObject({
      siteId: "demo",
      cacheUntilMs: until,
    });
  });

  it("refuses unknown, malformed and wrong-kind keys and unknown origins with typed errors", async () => {
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, reasonOf);
    const invalidKey = { code: Code.Unauthenticated, reason: "invalid_key", fields: {} };
    expect(await refusal(auth.resolveSiteKey({ key: "pk_nothex" }))).toMatchObject(invalidKey);
    expect(await refusal(auth.resolveSiteKey({ key: "pk_" + "9".repeat(32) }))).toMatchObject(
      invalidKey,
    );
    expect(await refusal(auth.resolveSecretKey({ key: "sk_" + "9".repeat(48) }))).toMatchObject(
      invalidKey,
    );
    // A key of another kind, even of the right site, is refused by its format.
    expect(await refusal(auth.resolveSiteKey({ key: SECRET_KEY }))).toMatchObject(invalidKey);
    expect(await refusal(auth.resolveReportKey({ key: SECRET_KEY }))).toMatchObject(invalidKey);
    expect(await refusal(auth.resolvePreviewKey({ key: SITE_KEY }))).toMatchObject(invalidKey);
    expect(await refusal(auth.resolveSiteKey({ key: PREVIEW_KEY }))).toMatchObject(invalidKey);
    const unknownDomain = { code: Code.InvalidArgument, reason: "unknown_domain" };
    expect(await refusal(auth.resolveOrigin({ origin: "https://other.example" }))).toMatchObject(
      unknownDomain,
    );
    expect(await refusal(auth.resolveOrigin({ origin: "not an origin" }))).toMatchObject(
      unknownDomain,
    );
  });

  it("creates a key that resolves at once and revokes it at once, by key or by hash", async () => {
    const created = await admin.createKey({ siteId: "demo", kind: KeyKind.SITE });
    expect(created.key).toMatch(/^pk_[0-9a-f]{32}$/);
    expect(created.keyHash).toBe(hashKey(created.key));
    expect((await auth.resolveSiteKey({ key: created.key })).siteId).toBe("demo");
    expect(await admin.revokeKey({ key: created.key })).toMatchObject({
      keyHash: created.keyHash,
      siteId: "demo",
      alreadyRevoked: false,
    });
    // The clock stands still: only the revocation can explain the refusal.
    expect(reasonOf(await auth.resolveSiteKey({ key: created.key }).catch((e) => e))).toMatchObject(
      { code: Code.Unauthenticated, reason: "invalid_key" },
    );
    expect((await admin.revokeKey({ key: created.keyHash })).alreadyRevoked).toBe(true);
    expect((await admin.listSites({})).siteIds).toEqual(["demo"]);
  });

  it("refuses key commands with typed errors", async () => {
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, reasonOf);
    expect(await refusal(admin.createKey({ siteId: "nosuch", kind: KeyKind.SITE })))
      .toMatchObject({
        code: Code.NotFound,
        reason: "site_not_found",
        fields: { siteId: "nosuch" },
      });
    expect(await refusal(admin.createKey({ siteId: "demo", kind: KeyKind.UNSPECIFIED })))
      .toMatchObject({ code: Code.InvalidArgument, reason: "invalid_key_kind" });
    expect(await refusal(admin.revokeKey({ key: "pk_" + "7".repeat(32) }))).toMatchObject({
      code: Code.NotFound,
      reason: "key_not_found",
    });
    expect(await refusal(admin.revokeKey({ key: "nonsense" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "invalid_key_format",
    });
    // The site has one active secret key; the limit is five.
    for (let i = 0; i < 4; i++) await admin.createKey({ siteId: "demo", kind: KeyKind.SECRET });
    expect(await refusal(admin.createKey({ siteId: "demo", kind: KeyKind.SECRET })))
      .toMatchObject({
        code: Code.FailedPrecondition,
        reason: "too_many_secret_keys",
        fields: { max: 5 },
      });
  });

  it("refuses a manifest whose key belongs to another site, on the dry run and the apply", async () => {
    const other = manifest("other", { siteKeys: [SITE_KEY] });
    const refused = {
      code: Code.InvalidArgument,
      reason: "invalid_manifest",
      fields: { path: "$.siteKeys[0]", problem: "belongs to another site" },
    };
    for (const dryRun of [true, false]) {
      expect(await site.importSite({ manifestJson: other, dryRun }).catch(reasonOf))
        .toMatchObject(refused);
    }
    expect(await site.exportSite({ siteId: "other" }).catch(reasonOf)).toMatchObject({
      code: Code.NotFound,
      reason: "site_not_found",
      fields: { siteId: "other" },
    });
  });

  it("needs the admin token on its admin services only", async () => {
    const anonymous = service.client(AuthAdminService);
    expect(await anonymous.listSites({}).catch((e) => e.code)).toBe(Code.Unauthenticated);
    const wrong = service.client(SiteAdminService, { adminToken: "wrong" });
    expect(await wrong.exportSite({ siteId: "demo" }).catch((e) => e.code)).toBe(
      Code.Unauthenticated,
    );
    expect((await service.client(AuthService).resolveSiteKey({ key: SITE_KEY })).siteId).toBe(
      "demo",
    );
  });
});
