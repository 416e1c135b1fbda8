/**
 * Share links in auth-service through Connect's in-memory transport on
 * PGlite: create, list and revoke as `admin share` calls them; resolution
 * with and without a password; expiry and revocation through the key cache;
 * the site's embed origins from its manifest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, Code } from "@connectrpc/connect";
import { AuthAdminService, AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { ManualClock } from "../lib/clock.ts";
import { reasonOf } from "../lib/errors.ts";
import { SHARE_ID } from "../lib/share_links.ts";
import { type InMemoryService, inMemoryService } from "../../test/helpers/in_memory.ts";
import { authService } from "./main.ts";

const TTL_S = 60;
const PUBLIC_URL = "https://stats.example";

const manifest = (site: string, embedOrigins?: string[]) =>
  JSON.stringify({
    site: {
      id: site,
      name: `Site ${site}`,
      languages: ["en"],
      domains: [`${site}.example`],
      ...(embedOrigins ? { embedOrigins } : {}),
    },
  });

const reason = async (call: Promise<unknown>) => {
  const error = await call.then(() => undefined, (e) => e);
  return { reason: reasonOf(error)?.reason, code: reasonOf(error)?.code };
};

describe("share links in auth-service", () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  let service: InMemoryService;
  let auth: Client<typeof AuthService>;
  let admin: Client<typeof AuthAdminService>;
  let site: Client<typeof SiteAdminService>;

  beforeAll(async () => {
    service = await inMemoryService(authService, {
      clock,
      env: { KEY_CACHE_TTL_S: String(TTL_S), PUBLIC_URL: PUBLIC_URL + "/" },
    });
    auth = service.client(AuthService);
    admin = service.client(AuthAdminService);
    site = service.client(SiteAdminService);
    await site.importSite({ manifestJson: manifest("demo", ["https://intranet.example"]) });
    await site.importSite({ manifestJson: manifest("other") });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("creates a link under PUBLIC_URL that resolves to its site", async () => {
    const { link } = await admin.createShareLink({ siteId: "demo", label: "Board" });
    expect(link!.id).toMatch(SHARE_ID);
    expect(link!.url).toBe(`${PUBLIC_URL}/share/${link!.id}`);
    expect(link).toMatchObject({ siteId: "demo", label: "Board", hasPassword: false });
    expect(link!.expiresAtMs).toBe(0n);
    const resolved = await auth.resolveShareLink({ id: link!.id, password: "" });
    expect(resolved.siteId).toBe("demo");
    expect(Number(resolved.cacheUntilMs)).toBe(clock.now() + TTL_S * 1000);
    const page = await auth.describeShareLink({ id: link!.id });
    expect(page).toMatchObject({
      siteId: "demo",
      passwordRequired: false,
      embedOrigins: ["https://intranet.example"],
    });
  });

  it("refuses unknown and malformed links as invalid_key", async () => {
    for (const id of ["sh_" + "0".repeat(32), "sh_x", "rk_" + "ab".repeat(24)]) {
      expect(await reason(auth.resolveShareLink({ id, password: "" }))).toEqual({
        reason: "invalid_key",
        code: Code.Unauthenticated,
      });
      expect((await reason(auth.describeShareLink({ id }))).reason).toBe("invalid_key");
    }
  });

  it("asks for the password, stores only its scrypt hash, and compares it", async () => {
    const { link } = await admin.createShareLink({ siteId: "demo", password: "open sesame" });
    expect(link!.hasPassword).toBe(true);
    const [row] = await service.db.query<{ password_hash: string }>(
      "select password_hash from auth.share_links where id = $1",
      [link!.id],
    );
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain("open sesame");
    expect((await auth.describeShareLink({ id: link!.id })).passwordRequired).toBe(true);
    for (const password of ["", "open", "open sesame!"]) {
      expect(await reason(auth.resolveShareLink({ id: link!.id, password }))).toEqual({
        reason: "password_required",
        code: Code.Unauthenticated,
      });
    }
    const ok = await auth.resolveShareLink({ id: link!.id, password: "open sesame" });
    expect(ok.siteId).toBe("demo");
    // Found right once, it is not compared again, and a wrong one still is refused.
    expect((await auth.resolveShareLink({ id: link!.id, password: "open sesame" })).siteId)
      .toBe("demo");
    expect((await reason(auth.resolveShareLink({ id: link!.id, password: "x" }))).reason)
      .toBe("password_required");
  });

  it("stops a link at its expiry, even when cached", async () => {
    const expiresAt = clock.now() + 10_000;
    const { link } = await admin.createShareLink({
      siteId: "demo",
      expiresAtMs: BigInt(expiresAt),
    });
    const resolved = await auth.resolveShareLink({ id: link!.id, password: "" });
    expect(Number(resolved.cacheUntilMs)).toBe(expiresAt);
    clock.advance(10_000);
    expect((await reason(auth.resolveShareLink({ id: link!.id, password: "" }))).reason)
      .toBe("invalid_key");
    expect((await reason(auth.describeShareLink({ id: link!.id }))).reason).toBe("invalid_key");
  });

  it("refuses an expiry in the past and a site it does not know", async () => {
    expect(
      (await reason(admin.createShareLink({ siteId: "demo", expiresAtMs: BigInt(clock.now()) })))
        .reason,
    ).toBe("expiry_in_past");
    expect((await reason(admin.createShareLink({ siteId: "nope" }))).reason).toBe(
      "site_not_found",
    );
    expect((await reason(admin.listShareLinks({ siteId: "nope" }))).reason).toBe(
      "site_not_found",
    );
  });

  it("revokes at once, though the answer was cached, and says when it already was", async () => {
    const { link } = await admin.createShareLink({ siteId: "other" });
    await auth.resolveShareLink({ id: link!.id, password: "" });
    const revoked = await admin.revokeShareLink({ id: link!.id });
    expect(revoked.alreadyRevoked).toBe(false);
    expect(Number(revoked.link!.revokedAtMs)).toBe(clock.now());
    expect((await reason(auth.resolveShareLink({ id: link!.id, password: "" }))).reason)
      .toBe("invalid_key");
    expect((await admin.revokeShareLink({ id: link!.id })).alreadyRevoked).toBe(true);
    expect((await reason(admin.revokeShareLink({ id: "sh_" + "1".repeat(32) }))).reason)
      .toBe("share_link_not_found");
  });

  it("lists a site's links oldest first, revoked ones included, without passwords", async () => {
    const { links } = await admin.listShareLinks({ siteId: "other" });
    expect(links.map((l) => l.siteId)).toEqual(["other"]);
    expect(links[0].revokedAtMs).not.toBe(0n);
    const demo = (await admin.listShareLinks({ siteId: "demo" })).links;
    expect(demo.length).toBe(3);
    expect(demo.map((l) => Number(l.createdAtMs))).toEqual(
      [...demo.map((l) => Number(l.createdAtMs))].sort((a, b) => a - b),
    );
    expect(JSON.stringify(demo, (_k, v) => typeof v === "bigint" ? String(v) : v)).not.toContain(
      "scrypt",
    );
  });

  it("takes new embed origins from an import at once, and exports them", async () => {
    const { link } = await admin.createShareLink({ siteId: "other" });
    expect((await auth.describeShareLink({ id: link!.id })).embedOrigins).toEqual([]);
    await site.importSite({
      manifestJson: manifest("other", ["https://a.example", "https://b.example:8443"]),
    });
    expect((await auth.describeShareLink({ id: link!.id })).embedOrigins).toEqual([
      "https://a.example",
      "https://b.example:8443",
    ]);
    const exported = JSON.parse((await site.exportSite({ siteId: "other" })).manifestJson);
    expect(exported.site.embedOrigins).toEqual(["https://a.example", "https://b.example:8443"]);
    // The same manifest again changes nothing.
    const again = await site.importSite({
      manifestJson: manifest("other", ["https://a.example", "https://b.example:8443"]),
    });
    expect(again.changes).toEqual({});
  });
});
