/**
 * Shields through the marketing routes on every storage: page views and
 * events from a shielded IP range or country, on a shielded page, or with a
 * referrer on REFERRER_BLOCKLIST are answered as stored ones, never stored,
 * and counted by reason in `admin stats dropped`; leads are never dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, beacon, exported, postEvent } from "./helpers/marketing.ts";
import { runAdmin } from "./helpers/admin.ts";
import { openGeo } from "../services/ingest/geo.ts";

const SHIELDED_IP = "203.0.113.77";
const KEPT_IP = "198.51.100.20";
/** A public address whose country the bundled database knows. */
const FOREIGN_IP = "8.8.8.8";

describe.each(SYSTEM_STORAGES)("shields, %s", (storage) => {
  let sys: TestSystem;
  let env: Record<string, string>;
  let blocklist: string;
  const country = openGeo(undefined).country(FOREIGN_IP);

  beforeAll(async () => {
    blocklist = await Deno.makeTempFile({ suffix: ".txt" });
    await Deno.writeTextFile(blocklist, "# referrer spam\nspam.example\n");
    const manifest = await analyticsManifest();
    manifest.shields = {
      ips: ["203.0.113.0/24", "2001:db8::/32"],
      countries: [country],
      pages: ["/admin*"],
    };
    sys = await startTestSystem({
      storage,
      seed: manifest,
      env: { TRUST_PROXY: "1", REFERRER_BLOCKLIST: blocklist },
    });
    env = { INGEST_URL: sys.config.ingestUrl };
  });
  afterAll(async () => {
    await sys?.close();
    await Deno.remove(blocklist).catch(() => {});
  });

  const from = (ip: string) => ({ "x-forwarded-for": ip });

  it("knows the foreign address's country", () => {
    expect(country).toMatch(/^[A-Z]{2}$/);
  });

  it("drops what the shields name, answers as stored, counts each by reason", async () => {
    const started = new Date().toISOString();
    const answers = [
      await beacon(sys, "/marketing/view", { u: "https://demo.example/a", v: "v1", s: "s1" }, {
        ...from(SHIELDED_IP),
      }),
      await beacon(sys, "/marketing/view", { u: "https://demo.example/b", v: "v2", s: "s2" }, {
        ...from(FOREIGN_IP),
      }),
      await beacon(sys, "/marketing/view", { u: "https://demo.example/admin/users", v: "v3" }, {
        ...from(KEPT_IP),
      }),
      await beacon(sys, "/marketing/view", {
        u: "https://demo.example/c",
        v: "v4",
        s: "spam-s",
        r: "https://www.spam.example/offer",
      }, from(KEPT_IP)),
      // The spam visit's event goes with its page view.
      await beacon(sys, "/marketing/act", { n: "signup", v: "v4", s: "spam-s" }, from(KEPT_IP)),
    ];
    expect(answers.map((a) => a.status)).toEqual([204, 204, 204, 204, 204]);
    const server = await postEvent(sys, { name: "signup", id: "shielded-1", vid: "v5" }, {
      ...from(SHIELDED_IP),
    });
    expect(server.status).toBe(200);
    expect(await server.json()).toEqual({ ok: true, duplicate: false });

    // What no shield names is stored, and a lead from a shielded address too.
    expect(
      (await beacon(sys, "/marketing/view", {
        u: "https://demo.example/kept",
        v: "v6",
        r: "https://notspam.example/",
      }, from(KEPT_IP))).status,
    ).toBe(204);
    expect(
      (await postEvent(sys, { name: "signup", id: "kept-1", vid: "v6" }, from(KEPT_IP))).status,
    ).toBe(200);
    const lead = await beacon(sys, "/marketing/lead", { email: "a@example.com", v: "v1" }, {
      ...from(SHIELDED_IP),
    });
    expect(lead.status).toBe(204);

    const views = await exported(sys, "pageviews");
    expect(views.map((v) => new URL(v.url).pathname)).toEqual(["/kept"]);
    const events = await exported(sys, "events");
    expect(events.map((e) => e.eventId)).toEqual(["kept-1"]);
    expect((await exported(sys, "leads")).map((l) => l.email)).toEqual(["a@example.com"]);

    const dropped = await runAdmin(["stats", "dropped", "demo"], env);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(JSON.parse(dropped.stdout)).toEqual({ ip: 2, country: 1, page: 1, referrer: 2 });
    const since = await runAdmin(["stats", "dropped", "demo", "--since", started], env);
    expect(JSON.parse(since.stdout)).toEqual({ ip: 2, country: 1, page: 1, referrer: 2 });
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = await runAdmin(["stats", "dropped", "demo", "--since", later], env);
    expect(JSON.parse(none.stdout)).toEqual({ ip: 0, country: 0, page: 0, referrer: 0 });
  });

  it("refuses an unknown site and a malformed --since", async () => {
    const unknown = await runAdmin(["stats", "dropped", "nosuchsite"], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/site/);
    const bad = await runAdmin(["stats", "dropped", "demo", "--since", "yesterday"], env);
    expect(bad.code).not.toBe(0);
  });

  it("exports the shields with the site", async () => {
    const before = await runAdmin(["export-site", "demo"], { ...env, ...servicesOf(sys) });
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout).shields).toEqual({
      ips: ["203.0.113.0/24", "2001:db8::/32"],
      countries: [country],
      pages: ["/admin*"],
    });
  });
});

function servicesOf(sys: TestSystem): Record<string, string> {
  return {
    AUTH_URL: sys.config.authUrl,
    CONTENT_URL: sys.config.contentUrl,
    INGEST_URL: sys.config.ingestUrl,
  };
}
