/**
 * One site's credentials never reach another site's data: every public route
 * of the gateway (the list is taken from the code, so a new route fails this
 * test until it has a row) is called with site A's key, secret key, origin or
 * report key, and with B's where a key of the wrong kind must be refused;
 * afterwards B's stored rows hold nothing that was sent, and no answer given
 * to A shows anything of B's. The same calls with B's credentials do show
 * B's content, so the checks can fail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, CHROME, exported, type Json, SECRET_KEY } from "./helpers/marketing.ts";
import { reportKeyOf } from "./helpers/stats.ts";
import { SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { CONTENT_ROUTES } from "../services/gateway/routes/content.ts";
import { MARKETING_ROUTES } from "../services/gateway/routes/marketing.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const STATS_PATH = "/stats/v1/query";

  const A = {
    id: "demo",
    siteKey: "pk_0123456789abcdef0123456789abcdef",
    secretKey: SECRET_KEY,
    reportKey: reportKeyOf("demo"),
    origin: "https://demo.example",
  };
  const B = {
    id: "rival",
    siteKey: "pk_b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0",
    secretKey: "sk_b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0",
    reportKey: reportKeyOf("rival"),
    origin: "https://rival.example",
  };
  /** Text only B's content holds. */
  const RIVAL = "RIVAL";
  /**
   * The indexes and the changes feed name markers and slugs, not content: B's
   * own are its page, section and post named rival*, none of which A has.
   */
  const INDEXES = new Set(["/content/v1/pages", "/content/v1/sections", "/content/v1/changes"]);
  const B_MARKERS = /rival/i;

  async function manifests(): Promise<[Json, Json]> {
    const a = await analyticsManifest();
    a.reportKeys = [A.reportKey];
    const b: Json = structuredClone(a);
    b.site = { ...b.site, id: B.id, domains: ["rival.example"], languages: ["en", "de", "fr"] };
    b.siteKeys = [B.siteKey];
    b.secretKeys = [B.secretKey];
    b.reportKeys = [B.reportKey];
    b.pages[0].marker = "rivalhome";
    b.pages[0].sections[0].blocks[0].content = { en: `${RIVAL} title`, fr: `${RIVAL} titre` };
    b.sections[0].marker = "rivalfooter";
    b.sections[0].blocks = [{ marker: "note", type: "text", content: { en: `${RIVAL} note` } }];
    b.posts = [{ ...b.posts[0], slug: "rival-post", title: { en: `${RIVAL} post` } }];
    return [a, b];
  }

  let sys: TestSystem;

  beforeAll(async () => {
    const [a, b] = await manifests();
    sys = await startTestSystem({ storage, seed: a });
    await importManifest(sys.system.admin, JSON.stringify(b));
  }, 60_000);

  afterAll(async () => {
    await sys?.close();
  });

  /** Content paths per route pattern: markers both sites have, and markers only B has. */
  const CONTENT_PATHS: Record<string, string[]> = {
    "/content/v1/pages": ["/content/v1/pages"],
    "/content/v1/sections": ["/content/v1/sections"],
    "/content/v1/changes": ["/content/v1/changes"],
    "/content/v1/pages/:marker": [
      "/content/v1/pages/home?lang=en",
      "/content/v1/pages/rivalhome?lang=en",
    ],
    "/content/v1/sections/:marker": [
      "/content/v1/sections/hero?lang=en",
      "/content/v1/sections/rivalfooter",
    ],
    "/content/v1/blocks/:marker": [
      "/content/v1/blocks/title?section=hero&lang=en",
      "/content/v1/blocks/note?section=rivalfooter",
    ],
    "/content/v1/blog": ["/content/v1/blog?lang=en"],
    "/content/v1/blog/:slug": ["/content/v1/blog/rival-post", "/content/v1/blog/hello-world"],
    "/content/v1/langs": ["/content/v1/langs"],
  };

  async function read(path: string, key: string): Promise<{ status: number; text: string }> {
    const answer = await sys.get(path, { headers: { "x-crm-key": key } });
    return { status: answer.status, text: await answer.text() };
  }

  type Send = (ids: { id: string }) => Promise<Response>;

  function post(path: string, body: Json, headers: Record<string, string>): Promise<Response> {
    return sys.get(path, { method: "POST", headers, body: JSON.stringify(body) });
  }
  const server = (key: string) => ({ "content-type": "application/json", "x-event-key": key });
  const browser = (origin: string, extra: Record<string, string> = {}) => ({
    "content-type": "text/plain;charset=UTF-8",
    origin,
    "user-agent": CHROME,
    ...extra,
  });

  /**
   * Writes per marketing route: each sends A's credentials (or B's key of the
   * wrong kind, or B's key beside A's origin) and says what answer it expects.
   */
  const WRITES: Record<string, { name: string; send: Send; accepted: boolean }[]> = {
    "/marketing/event": [
      {
        name: "A's secret key",
        accepted: true,
        send: ({ id }) =>
          post("/marketing/event", { name: "signup", event_id: id }, server(A.secretKey)),
      },
      {
        name: "B's site key where a secret key is needed",
        accepted: false,
        send: ({ id }) =>
          post("/marketing/event", { name: "signup", event_id: id }, server(B.siteKey)),
      },
      {
        name: "B's report key where a secret key is needed",
        accepted: false,
        send: ({ id }) =>
          post("/marketing/event", { name: "signup", event_id: id }, server(B.reportKey)),
      },
    ],
    "/marketing/view": [
      {
        name: "A's origin with B's site key beside it",
        accepted: true,
        send: ({ id }) =>
          post(
            "/marketing/view",
            { v: id, s: id, u: `${A.origin}/p` },
            browser(A.origin, { "x-crm-key": B.siteKey }),
          ),
      },
    ],
    "/marketing/act": [
      {
        name: "A's origin",
        accepted: true,
        send: ({ id }) =>
          post("/marketing/act", { n: "signup", v: id, s: id, id }, browser(A.origin)),
      },
    ],
    "/marketing/lead": [
      {
        name: "A's secret key",
        accepted: true,
        send: ({ id }) =>
          post("/marketing/lead", { email: `${id}@a.example` }, server(A.secretKey)),
      },
      {
        name: "A's origin",
        accepted: true,
        send: ({ id }) =>
          post("/marketing/lead", { email: `${id}@b.example`, v: id, s: id }, browser(A.origin)),
      },
    ],
  };

  describe("another site's credentials", () => {
    it("cover every public route of the gateway", () => {
      const routes = [...CONTENT_ROUTES, ...MARKETING_ROUTES].map((r) => r.path).concat(STATS_PATH);
      const covered = [...Object.keys(CONTENT_PATHS), ...Object.keys(WRITES), STATS_PATH];
      expect(covered.sort()).toEqual(routes.sort());
    });

    it("read none of the other site's content on any content route, cache included", async () => {
      for (const [pattern, paths] of Object.entries(CONTENT_PATHS)) {
        let bSawItsOwn = false;
        for (const path of paths) {
          // B reads first, so its answer sits in the gateway's cache when A asks.
          const b = await read(path, B.siteKey);
          const bOwn = INDEXES.has(pattern)
            ? B_MARKERS.test(b.text)
            : b.text.includes(RIVAL) || b.text.includes('"fr"');
          if (b.status === 200 && bOwn) bSawItsOwn = true;
          const a = await read(path, A.siteKey);
          expect(a.text, `${path} with A's key`).not.toContain(RIVAL);
          if (INDEXES.has(pattern)) expect(a.text, `${path} with A's key`).not.toMatch(B_MARKERS);
          // fr is one of B's languages only.
          if (pattern === "/content/v1/langs") expect(a.text).not.toContain('"fr"');
          expect([200, 404], `${path} with A's key`).toContain(a.status);
        }
        expect(bSawItsOwn, `${pattern}: B's own key sees B's content`).toBe(true);
      }
    });

    it("write nothing into the other site on any marketing route", async () => {
      const sent: { route: string; name: string; id: string; accepted: boolean }[] = [];
      for (const [route, cases] of Object.entries(WRITES)) {
        for (const c of cases) {
          const id = uniqueId("x");
          const answer = await c.send({ id });
          const body = await answer.text();
          if (c.accepted) expect(answer.status, `${route} ${c.name}: ${body}`).toBeLessThan(300);
          else expect(answer.status, `${route} ${c.name}: ${body}`).toBe(401);
          sent.push({ route, name: c.name, id, accepted: c.accepted });
        }
      }
      const stored = async (siteId: string) =>
        JSON.stringify([
          ...await exported(sys, "events", siteId),
          ...await exported(sys, "pageviews", siteId),
          ...await exported(sys, "leads", siteId),
        ]);
      const inA = await stored(A.id);
      const inB = await stored(B.id);
      for (const s of sent) {
        expect(inB, `${s.route} ${s.name} reached B`).not.toContain(s.id);
        if (s.accepted) expect(inA, `${s.route} ${s.name} stored in A`).toContain(s.id);
        else expect(inA, `${s.route} ${s.name} refused yet stored`).not.toContain(s.id);
      }
    });

    it("read only the report key's own site on the reports route", async () => {
      const query = (key: string, body: Json = { metrics: ["pageviews"], date_range: "today" }) =>
        sys.get(STATS_PATH, {
          method: "POST",
          headers: { "content-type": "application/json", "x-report-key": key },
          body: JSON.stringify(body),
        });
      // A page view for A only, so the two sites' counts differ.
      const view = await post(
        "/marketing/view",
        { v: "r1", s: "r1", u: `${A.origin}/r` },
        browser(A.origin),
      );
      expect(view.status).toBeLessThan(300);
      const a = await (await query(A.reportKey)).json();
      const b = await (await query(B.reportKey)).json();
      expect(a.results[0].metrics[0]).toBeGreaterThan(0);
      expect(b.results[0].metrics[0]).toBe(0);
      // A body naming B's site changes nothing: the key alone decides the site.
      const named = await query(A.reportKey, {
        metrics: ["pageviews"],
        date_range: "today",
        siteId: B.id,
        site_id: B.id,
      });
      if (named.status === 200) expect((await named.json()).results).toEqual(a.results);
      else expect(named.status).toBe(400);
      // Keys of other kinds, of either site, are no report keys.
      for (const key of [B.siteKey, B.secretKey, A.siteKey, A.secretKey]) {
        const refused = await query(key);
        expect(refused.status).toBe(401);
        expect((await refused.json()).message).toBe("invalid_key");
      }
    });
  });
});
