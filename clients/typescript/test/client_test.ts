/**
 * The TypeScript client against `deno task start` on its own PGlite store:
 * content reads with ETags, server events and leads, reports and funnels,
 * and refusals as CrmApiError. Every answer is also checked against the
 * OpenAPI document by the tests' fetch (test/helpers/openapi.ts). In Chromium, the
 * browser bundle reads content and reports from a page of another origin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedProcess, startTask } from "../../../test/helpers/process.ts";
import { readFixture } from "../../../test/helpers/system.ts";
import { createCrmClient, CrmApiError } from "../src/index.ts";
import { BROWSER_TESTS, launchBrowser, startPageServer } from "../../../test/helpers/browser.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const REPORT_KEY = "rk_0123456789abcdef0123456789abcdef0123456789abcdef";
const PREVIEW_KEY = "pv_0123456789abcdef0123456789abcdef";
const DRAFT = {
  slug: "next-draft",
  status: "draft",
  createdAt: "2026-01-12T09:00:00Z",
  title: { en: "Soon" },
  body: { en: "<p>Soon</p>" },
};

describe("the TypeScript client", () => {
  let started: StartedProcess;
  let dataDir: string;
  const requests: Request[] = [];
  /** The global fetch, counting what the client sends. */
  const counting = (request: Request) => {
    requests.push(request.clone());
    return fetch(request);
  };
  const client = (
    keys: { siteKey?: string; secretKey?: string; reportKey?: string; previewKey?: string } = {},
  ) =>
    createCrmClient({
      baseUrl: started.url,
      siteKey: SITE_KEY,
      secretKey: SECRET_KEY,
      reportKey: REPORT_KEY,
      fetch: counting as typeof fetch,
      ...keys,
    });

  beforeAll(async () => {
    dataDir = await Deno.makeTempDir({ prefix: "crm-client-" });
    const manifest = await readFixture("contract-example.json") as Record<string, unknown>;
    const seed = `${dataDir}/seed.json`;
    await Deno.writeTextFile(
      seed,
      JSON.stringify({
        ...manifest,
        reportKeys: [REPORT_KEY],
        previewKeys: [PREVIEW_KEY],
        posts: [...(manifest.posts as unknown[]), DRAFT],
      }),
    );
    started = await startTask(["--seed", seed], {
      DATABASE_URL: "",
      REDIS_URL: "",
      CRM_DATA_DIR: `${dataDir}/store`,
    });
  }, 180_000);
  afterAll(async () => {
    await started?.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });

  it("reads content, then revalidates with If-None-Match and gets the kept answer on 304", async () => {
    const crm = client();
    const first = await crm.page("home", { lang: ["en"] });
    expect(first.notModified).toBe(false);
    expect(first.data.marker).toBe("home");
    expect(Object.keys(first.data.content)).toContain("hero");
    expect(first.etag).toMatch(/^"/);

    requests.length = 0;
    const again = await crm.page("home", { lang: ["en"] });
    expect(requests[0].headers.get("if-none-match")).toBe(first.etag);
    expect(again.notModified).toBe(true);
    expect(again.data).toEqual(first.data);

    // With the cache off, the caller's own ETag gives a bare 304.
    const bare = createCrmClient({ baseUrl: started.url, siteKey: SITE_KEY, contentCache: false });
    const revalidated = await bare.page("home", { lang: ["en"], ifNoneMatch: first.etag! });
    expect(revalidated).toMatchObject({ notModified: true, data: undefined });
    const other = await bare.page("home", { lang: ["de"], ifNoneMatch: first.etag! });
    expect(other.notModified).toBe(false);
  });

  it("reads sections, blocks, the blog, a post and the languages", async () => {
    const crm = client();
    expect((await crm.section("footer")).data.marker).toBe("footer");
    const block = await crm.block("title", { lang: ["de"] });
    expect(block.data.type).toBe("text");
    expect(block.data.content).toEqual({ de: "Hallo" });
    const blog = await crm.blog({ limit: 5 });
    expect(blog.data.limit).toBe(5);
    expect(blog.data.posts.map((p) => p.slug)).toContain("hello-world");
    const post = await crm.post("hello-world");
    expect(post.data.slug).toBe("hello-world");
    expect(post.data.body.en).toContain("Hi");
    expect((await crm.langs()).data.langs).toEqual(["en", "de"]);
  });

  it("lists pages and sections, follows the changes feed, and previews drafts", async () => {
    const crm = client();
    const pages = await crm.listPages();
    expect(pages.data.pages.map((p) => p.marker)).toEqual(["home"]);
    expect(pages.data.total).toBe(1);
    expect((await crm.listPages()).notModified).toBe(true);
    const sections = await crm.listSections();
    expect(sections.data.sections.map((s) => [s.marker, s.page])).toEqual([
      ["hero", "home"],
      ["footer", null],
    ]);
    const full = await crm.changes();
    expect(full.data.full).toBe(true);
    expect(full.data.posts).toEqual(["hello-world"]);
    const since = await crm.changes({ since: full.data.cursor });
    expect(since.data).toMatchObject({ full: false, pages: [], posts: [] });
    await expect(crm.changes({ since: "nope" })).rejects.toMatchObject({
      status: 400,
      body: { message: "invalid_cursor" },
    });
    const preview = client({ previewKey: PREVIEW_KEY });
    const draft = await preview.post(DRAFT.slug);
    expect(draft.data.status).toBe("draft");
    expect((await preview.blog()).data.posts.map((p) => p.slug)).toContain(DRAFT.slug);
    await expect(crm.post(DRAFT.slug)).rejects.toMatchObject({ status: 404 });
  });

  it("refuses with CrmApiError: status, body and request id", async () => {
    const wrongKey = client({ siteKey: "pk_ffffffffffffffffffffffffffffffff" });
    const refused = await wrongKey.page("home").catch((error) => error);
    expect(refused).toBeInstanceOf(CrmApiError);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ message: "invalid_key" });
    expect(refused.requestId).toBeTruthy();
    const missing = await client().page("nope").catch((error) => error);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("page_not_found");
  });

  it("sends server events and leads with the secret key", async () => {
    const crm = client();
    const eventId = `client-${crypto.randomUUID()}`;
    expect(await crm.event({ name: "signup", event_id: eventId, params: { plan: "pro" } }))
      .toEqual({ ok: true, duplicate: false });
    expect(await crm.event({ name: "signup", event_id: eventId }))
      .toEqual({ ok: true, duplicate: true });
    const unknown = await crm.event({ name: "nope" }).catch((error) => error);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ message: "unknown_event", name: "nope" });
    const lead = await crm.lead({ lead_id: "client-lead", name: "Ann", email: "ann@x.example" });
    expect(lead.ok).toBe(true);
    expect(lead.id).toBeTruthy();
    const noKey = createCrmClient({ baseUrl: started.url });
    await expect(noKey.event({ name: "signup" })).rejects.toThrow(/secretKey/);
  });

  it("runs reports, funnels and reads the site with the report key", async () => {
    const crm = client();
    const answer = await crm.query({
      metrics: ["events", "leads"],
      date_range: "today",
      include: { totals: true },
    });
    expect(answer.query.metrics).toEqual(["events", "leads"]);
    expect(answer.results).toHaveLength(1);
    expect(answer.totals).toHaveLength(2);
    const funnel = await crm.funnel({
      date_range: "today",
      steps: [{ event: "signup" }, { lead: true }],
    });
    expect(funnel.steps.map((s) => s.step)).toEqual([{ event: "signup" }, { lead: true }]);
    const site = await crm.site();
    expect(site.siteId).toBe("demo");
    expect(site.eventTypes.map((t) => t.name)).toEqual(["signup"]);
    const invalid = await crm.query({ metrics: [], date_range: "all" }).catch((error) => error);
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe("invalid_query");
  });

  it.runIf(BROWSER_TESTS)(
    "works in a browser, across origins: content with ETags and reports",
    async () => {
      // The client as a browser loads it: bundled for the browser, on a page of another origin.
      const bundle = `${dataDir}/client.js`;
      const bundled = await new Deno.Command(Deno.execPath(), {
        args: ["bundle", "--quiet", "--platform", "browser", "--format", "esm", "--output", bundle]
          .concat(new URL("../src/index.ts", import.meta.url).pathname),
        stderr: "piped",
      }).output();
      expect(bundled.code, new TextDecoder().decode(bundled.stderr)).toBe(0);
      const code = await Deno.readTextFile(bundle);
      const pages = startPageServer();
      pages.add("/client", "<!doctype html><title>client</title>");
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(`${pages.origin}/client`);
        // The module's exports, handed to the page as a global (an inline module has no importer).
        await page.addScriptTag({
          type: "module",
          content: `${code}\nglobalThis.crmClient = { createCrmClient };`,
        });
        await page.waitForFunction(() => "crmClient" in globalThis);
        const seen = await page.evaluate(
          async ({ baseUrl, siteKey, reportKey }) => {
            // deno-lint-ignore no-explicit-any
            const { createCrmClient } = (globalThis as any).crmClient;
            const crm = createCrmClient({ baseUrl, siteKey, reportKey });
            const first = await crm.page("home", { lang: ["en"] });
            const again = await crm.page("home", { lang: ["en"] });
            const site = await crm.site();
            const refused = await createCrmClient({ baseUrl, siteKey: "pk_" + "f".repeat(32) })
              .langs().catch((error: { status: number; requestId: string | null }) => error);
            return {
              marker: first.data.marker,
              etag: first.etag,
              notModified: again.notModified,
              sameData: JSON.stringify(again.data) === JSON.stringify(first.data),
              siteId: site.siteId,
              refusedStatus: refused.status,
              requestId: refused.requestId,
            };
          },
          { baseUrl: started.url, siteKey: SITE_KEY, reportKey: REPORT_KEY },
        );
        expect(seen.marker).toBe("home");
        // ETag and X-Request-Id are readable across origins (Access-Control-Expose-Headers).
        expect(seen.etag).toMatch(/^"/);
        expect(seen.notModified).toBe(true);
        expect(seen.sameData).toBe(true);
        expect(seen.siteId).toBe("demo");
        expect(seen.refusedStatus).toBe(401);
        expect(seen.requestId).toBeTruthy();
      } finally {
        await browser.close();
        await pages.close();
      }
    },
  );
});
