/**
 * Share links: `admin share create|list|revoke` against a running system,
 * and what a link's holder can do through the gateway: the shared page, the
 * password and its limit, the embedded page's framing, and the stats API
 * read-only for the link's one site.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { runAdmin } from "./helpers/admin.ts";
import { analyticsManifest } from "./helpers/marketing.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const SHARE_ID = /^sh_[a-f0-9]{32}$/;
  const EMBEDDER = "https://intranet.example";
  const REPORT_KEY = "rk_0123456789abcdef0123456789abcdef0123456789abcdef";
  /** Stats requests a link may make a minute here (600 unless set), so the limit can be met. */
  const PER_LINK = 6;

  let sys: TestSystem;
  let env: Record<string, string>;
  // A clock that stands still unless moved: limits' minutes turn only when a test says so.
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 12));

  beforeAll(async () => {
    const manifest = await analyticsManifest();
    // deno-lint-ignore no-explicit-any
    (manifest.site as any).embedOrigins = [EMBEDDER];
    manifest.reportKeys = [REPORT_KEY];
    sys = await startTestSystem({
      storage,
      seed: manifest,
      clock,
      env: { ADMIN_TOKEN: "t0k", RATE_LIMIT_STATS_PER_KEY: String(PER_LINK) },
    });
    env = { AUTH_URL: sys.config.authUrl, ADMIN_TOKEN: "t0k" };
    await importManifest(
      sys.system.admin,
      JSON.stringify({ site: { id: "other", languages: ["en"], domains: ["other.example"] } }),
    );
  });
  afterAll(async () => {
    await sys?.close();
  });

  /** A new link of the site, by `admin share create`. */
  async function share(siteId: string, ...flags: string[]): Promise<{ id: string; url: string }> {
    const made = await runAdmin(["share", "create", siteId, ...flags], env);
    expect(made.code).toBe(0);
    return JSON.parse(made.stdout);
  }

  describe("share links through deno task admin", () => {
    it("creates a link printing its id, URL, expiry and label", async () => {
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const made = await runAdmin(
        ["share", "create", "demo", "--expires", expires, "--label", "Board", "--password", "pw"],
        env,
      );
      expect(made.code).toBe(0);
      const link = JSON.parse(made.stdout);
      expect(Object.keys(link).sort()).toEqual(["expiresAt", "id", "label", "url"]);
      expect(link.id).toMatch(SHARE_ID);
      // PUBLIC_URL unset: the gateway's own address.
      expect(link.url).toBe(`${sys.url}/share/${link.id}`);
      expect(link.expiresAt).toBe(expires);
      expect(link.label).toBe("Board");

      const plain = JSON.parse((await runAdmin(["share", "create", "demo"], env)).stdout);
      expect(plain.expiresAt).toBeNull();
      expect(plain.label).toBeNull();
      // PUBLIC_URL set for the command names the link's URL.
      const named = JSON.parse(
        (await runAdmin(["share", "create", "demo"], {
          ...env,
          PUBLIC_URL: "https://crm.example/",
        }))
          .stdout,
      );
      expect(named.url).toBe(`https://crm.example/share/${named.id}`);
    });

    it("lists the site's links without passwords, and revokes one", async () => {
      const secret = "correct horse battery";
      const made = JSON.parse(
        (await runAdmin(["share", "create", "demo", "--password", secret], env)).stdout,
      );
      const listed = await runAdmin(["share", "list", "demo"], env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).not.toContain(secret);
      expect(listed.stdout).not.toContain("scrypt");
      const links = JSON.parse(listed.stdout);
      const entry = links.find((l: { id: string }) => l.id === made.id);
      expect(entry).toMatchObject({
        id: made.id,
        url: made.url,
        hasPassword: true,
        revokedAt: null,
      });

      const revoked = await runAdmin(["share", "revoke", made.id], env);
      expect(revoked.code).toBe(0);
      expect(JSON.parse(revoked.stdout)).toMatchObject({ id: made.id, alreadyRevoked: false });
      const after = JSON.parse((await runAdmin(["share", "list", "demo"], env)).stdout);
      expect(after.find((l: { id: string }) => l.id === made.id).revokedAt).not.toBeNull();
    });

    it("fails with one line on a bad expiry, an unknown site or link", async () => {
      const past = await runAdmin(["share", "create", "demo", "--expires", "2001-01-01"], env);
      expect(past.code).not.toBe(0);
      expect(past.stderr.trim().split("\n")).toHaveLength(1);
      const garbled = await runAdmin(["share", "create", "demo", "--expires", "soon"], env);
      expect(garbled.code).not.toBe(0);
      expect((await runAdmin(["share", "create", "nope"], env)).stderr).toContain("site_not_found");
      const unknown = await runAdmin(["share", "revoke", "sh_" + "0".repeat(32)], env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("share_link_not_found");
    });
  });

  const csp = (response: Response) => response.headers.get("content-security-policy") ?? "";

  function stats(
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Response> {
    return fetch(sys.url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        ...headers,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  const QUERY = { metrics: ["pageviews", "visitors"], date_range: "all" };

  describe("a share link through the gateway", () => {
    it("serves the site's dashboard read-only, framed by nobody", async () => {
      const link = await share("demo");
      const page = await fetch(link.url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(csp(page)).toContain("frame-ancestors 'none'");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      const html = await page.text();
      expect(html).toContain('name="crm-share"');
      expect(html).toContain("/dashboard/dashboard.js");
      expect(html).not.toContain('type="password"');
      // The reports page itself stays unframable.
      const dashboard = await fetch(`${sys.url}/dashboard/`);
      expect(csp(dashboard)).toContain("frame-ancestors 'none'");
      await dashboard.body?.cancel();
    });

    it("lets only the site's embedOrigins frame the embedded page", async () => {
      const link = await share("demo");
      const embedded = await fetch(`${link.url}?embed=true`);
      expect(embedded.status).toBe(200);
      expect(csp(embedded)).toContain(`frame-ancestors ${EMBEDDER}`);
      expect(csp(embedded)).not.toContain("'none'; base-uri 'none'; frame-ancestors 'none'");
      expect(embedded.headers.get("x-frame-options")).toBeNull();
      expect(await embedded.text()).toContain("&#34;embed&#34;:true");
      // A site without embedOrigins: nobody.
      const other = await share("other");
      const unframed = await fetch(`${other.url}?embed=true`);
      expect(csp(unframed)).toContain("frame-ancestors 'none'");
      await unframed.body?.cancel();
    });

    it("reads the stats API of its one site with x-share-link", async () => {
      const demo = await share("demo");
      const other = await share("other");
      const site = await stats("/stats/v1/site", { "x-share-link": demo.id });
      expect(site.status).toBe(200);
      expect((await site.json()).siteId).toBe("demo");
      const query = await stats("/stats/v1/query", { "x-share-link": demo.id }, QUERY);
      expect(query.status).toBe(200);
      const byKey = await stats("/stats/v1/query", { "x-report-key": REPORT_KEY }, QUERY);
      expect((await query.json()).results).toEqual((await byKey.json()).results);
      const funnel = await stats("/stats/v1/funnel", { "x-share-link": demo.id }, {
        date_range: "all",
        steps: [{ page: "/" }, { page: "/pricing" }],
      });
      expect(funnel.status).toBe(200);
      await funnel.body?.cancel();
      const otherSite = await stats("/stats/v1/site", { "x-share-link": other.id });
      expect((await otherSite.json()).siteId).toBe("other");
    });

    it("lists the site's segments but writes none", async () => {
      const link = await share("demo");
      const listed = await stats("/stats/v1/segments", { "x-share-link": link.id });
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual({ segments: [] });
      const filters = [["is", "visit:country", ["DE"]]];
      const made = await stats("/stats/v1/segments", { "x-share-link": link.id }, {
        name: "Germany",
        filters,
      });
      expect(made.status).toBe(401);
      expect(await made.json()).toEqual({ message: "invalid_key" });
      const byKey = await stats("/stats/v1/segments", { "x-report-key": REPORT_KEY }, {
        name: "Germany",
        filters,
      });
      expect(byKey.status).toBe(201);
      const { id } = await byKey.json();
      for (const method of ["PUT", "DELETE"]) {
        const write = await fetch(`${sys.url}/stats/v1/segments/${id}`, {
          method,
          headers: { "x-share-link": link.id, "content-type": "application/json" },
          body: method === "PUT" ? JSON.stringify({ name: "DE", filters }) : undefined,
        });
        expect(write.status, method).toBe(401);
        await write.body?.cancel();
      }
      const after = await stats("/stats/v1/segments", { "x-share-link": link.id });
      expect((await after.json()).segments.map((s: { name: string }) => s.name)).toEqual([
        "Germany",
      ]);
    });

    it("is no key anywhere else: content, marketing and report-key headers refuse it", async () => {
      const link = await share("demo");
      const content = await fetch(`${sys.url}/content/v1/pages/home`, {
        headers: { "x-crm-key": link.id, "x-share-link": link.id },
      });
      expect(content.status).toBe(401);
      await content.body?.cancel();
      const event = await fetch(`${sys.url}/marketing/event`, {
        method: "POST",
        headers: {
          "x-event-key": link.id,
          "x-share-link": link.id,
          "content-type": "application/json",
        },
        body: JSON.stringify({ name: "signup" }),
      });
      expect(event.status).toBe(401);
      await event.body?.cancel();
      const asReportKey = await stats("/stats/v1/query", { "x-report-key": link.id }, QUERY);
      expect(asReportKey.status).toBe(401);
      expect(await asReportKey.json()).toEqual({ message: "invalid_key" });
    });

    it("stops working when revoked: 401 invalid_key and a page saying so", async () => {
      const link = await share("demo");
      expect((await stats("/stats/v1/site", { "x-share-link": link.id })).status).toBe(200);
      expect((await runAdmin(["share", "revoke", link.id], env)).code).toBe(0);
      const refused = await stats("/stats/v1/site", { "x-share-link": link.id });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ message: "invalid_key" });
      const page = await fetch(link.url);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain("no longer works");
      const unknown = await stats("/stats/v1/site", { "x-share-link": "sh_" + "0".repeat(32) });
      expect(unknown.status).toBe(401);
      expect(await unknown.json()).toEqual({ message: "invalid_key" });
    });

    it("stops working at its expiry", async () => {
      const expires = new Date(clock.now() + 60_000).toISOString();
      const link = await share("demo", "--expires", expires);
      expect((await stats("/stats/v1/site", { "x-share-link": link.id })).status).toBe(200);
      expect((await fetch(link.url)).status).toBe(200);
      clock.advance(60_000);
      const refused = await stats("/stats/v1/site", { "x-share-link": link.id });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ message: "invalid_key" });
      const page = await fetch(link.url);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain("no longer works");
    });

    it("asks for its password, and locks for the minute after 10 wrong ones", async () => {
      const link = await share("demo", "--password", "open sesame");
      const other = await share("demo", "--password", "open sesame");
      const page = await fetch(link.url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('type="password"');
      const asking = (password?: string, id = link.id) =>
        stats("/stats/v1/site", {
          "x-share-link": id,
          ...(password === undefined ? {} : { "x-share-password": password }),
        });
      const missing = await asking();
      expect(missing.status).toBe(401);
      expect(await missing.json()).toEqual({ message: "password_required" });
      const right = await asking("open sesame");
      expect(right.status).toBe(200);
      expect((await right.json()).siteId).toBe("demo");
      for (let i = 0; i < 10; i++) {
        const wrong = await asking(`guess ${i}`);
        expect(wrong.status).toBe(401);
        expect(await wrong.json()).toEqual({ message: "password_required" });
      }
      const locked = await asking("guess 10");
      expect(locked.status).toBe(429);
      expect(await locked.json()).toEqual({ message: "rate_limit_exceeded" });
      // Locked for that link only, whatever the password, until the minute ends.
      expect((await asking("open sesame")).status).toBe(429);
      expect((await asking("open sesame", other.id)).status).toBe(200);
      clock.advance(60_000);
      expect((await asking("open sesame")).status).toBe(200);
    });

    it("counts its own 600 a minute (here PER_LINK), apart from other links and keys", async () => {
      clock.advance(60_000);
      const link = await share("demo");
      const other = await share("demo");
      for (let i = 0; i < PER_LINK; i++) {
        expect((await stats("/stats/v1/site", { "x-share-link": link.id })).status).toBe(200);
      }
      const over = await stats("/stats/v1/site", { "x-share-link": link.id });
      expect(over.status).toBe(429);
      expect(await over.json()).toEqual({ message: "rate_limit_exceeded" });
      expect((await stats("/stats/v1/site", { "x-share-link": other.id })).status).toBe(200);
    });

    it("is allowed across origins with its headers (preflight)", async () => {
      const preflight = await fetch(`${sys.url}/stats/v1/query`, {
        method: "OPTIONS",
        headers: {
          origin: "https://elsewhere.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "x-share-link, x-share-password, content-type",
        },
      });
      expect(preflight.status).toBeLessThan(300);
      const allowed = preflight.headers.get("access-control-allow-headers") ?? "";
      expect(allowed).toContain("x-share-link");
      expect(allowed).toContain("x-share-password");
      await preflight.body?.cancel();
    });
  });
});
