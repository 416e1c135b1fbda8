/**
 * An upgrade on real data: a database at the previous release's schema
 * (test/fixtures/previous-release.sql, made by that release's own code from
 * real requests) is migrated by today's services at start-up, on PGlite and
 * on Postgres (one storage per run, SYSTEM_STORAGES), and then every stored row is read back through what users and
 * operators read: the analytics exports, the site export, the content API,
 * and the reports added since, over the old rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { exported, type Json } from "./helpers/marketing.ts";
import { ACME_KEY } from "./helpers/content.ts";
import { openPglite } from "../services/lib/db/pglite.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { exportManifest } from "../services/cli/site_manifest.ts";
import { KeyKind } from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import { authMigrations } from "../services/auth/migrations/mod.ts";
import { contentMigrations } from "../services/content/migrations/mod.ts";
import { ingestMigrations } from "../services/ingest/migrations/mod.ts";

const FIXTURE = await Deno.readTextFile(
  new URL("./fixtures/previous-release.sql", import.meta.url),
);
const DEMO_KEY = "pk_0123456789abcdef0123456789abcdef";

/** Rows the fixture inserts into table (its partitions included), per site when asked. */
function rowsIn(table: string, siteId?: string): number {
  const escaped = table.replace(".", "\\.");
  const pattern = new RegExp(
    `^INSERT INTO ${escaped}(?:_p\\d{4}_\\d{2})? \\(.*?VALUES \\((.*)$`,
    "gm",
  );
  let count = 0;
  for (const match of FIXTURE.matchAll(pattern)) {
    if (siteId === undefined || match[1].startsWith(`'${siteId}',`)) count++;
  }
  return count;
}

/** The same thing counted in an exported manifest. */
function counted(manifest: Json) {
  const pageSections = manifest.pages.flatMap((p: Json) => p.sections ?? []);
  const sections = [...pageSections, ...(manifest.sections ?? [])];
  return {
    pages: manifest.pages.length,
    sections: sections.length,
    blocks: sections.reduce((n: number, s: Json) => n + (s.blocks?.length ?? 0), 0),
    posts: manifest.posts.length,
  };
}

describe.each(SYSTEM_STORAGES)("upgrading the previous release's database (%s)", (storage) => {
  let sys: TestSystem;
  let cleanup = async () => {};

  beforeAll(async () => {
    // After the fixture's rows were received, before the retention job could remove any.
    const clock = new ManualClock(Date.parse("2026-11-23T20:00:00Z"));
    if (storage === "pglite") {
      const dir = await Deno.makeTempDir({ prefix: "crm-upgrade-" });
      const db = await openPglite(dir);
      await db.exec(FIXTURE);
      await db.close();
      sys = await startTestSystem({ clock, env: { CRM_DATA_DIR: dir } });
      cleanup = () => Deno.remove(dir, { recursive: true });
    } else {
      const fresh = await freshPostgresUrl();
      const sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(FIXTURE);
      } finally {
        await sql.end();
      }
      sys = await startTestSystem({ clock, storage, databaseUrl: fresh.url });
      cleanup = fresh.drop;
    }
  }, 120_000);

  afterAll(async () => {
    await sys?.close();
    await cleanup();
  });

  it("brings every schema to today's version", async () => {
    const { admin } = sys.system;
    // The fixture is at auth 1, content 1, ingest 2: every later migration ran on its rows.
    expect((await admin.auth.migrate({})).currentVersion).toBe(authMigrations.length);
    expect((await admin.content.migrate({})).currentVersion).toBe(contentMigrations.length);
    expect((await admin.ingest.migrate({})).currentVersion).toBe(ingestMigrations.length);
    expect(authMigrations.length + ingestMigrations.length).toBeGreaterThan(1 + 2);
  });

  it("exports every stored page view, event and lead, with its values", async () => {
    const views = await exported(sys, "pageviews");
    const events = await exported(sys, "events");
    const leads = await exported(sys, "leads");
    expect(rowsIn("ingest.page_views")).toBe(6);
    expect(views).toHaveLength(rowsIn("ingest.page_views"));
    expect(events).toHaveLength(rowsIn("ingest.events"));
    expect(leads).toHaveLength(rowsIn("ingest.leads"));
    for (const view of views) {
      expect(view.url).toMatch(/^https:\/\/demo\.example\/p\/\d\?utm_source=news/);
      expect(view.url).not.toContain("token");
      expect(view.title).toMatch(/^Page \d$/);
      expect(view).toMatchObject({ utmSource: "news", utmMedium: "email", utmCampaign: "fall" });
    }
    expect(new Set(views.map((v) => v.visitorId))).toEqual(
      new Set(["visitor-0", "visitor-1", "visitor-2"]),
    );
    const first = events.find((e) => e.eventId === "prev-ev-1");
    expect(first).toMatchObject({
      name: "signup",
      visitorId: "visitor-1",
      params: { plan: "pro", seats: 1 },
      value: 491,
      currency: "USD",
      url: "https://demo.example/thanks?plan=pro",
    });
    expect(events.map((e) => e.eventId).sort()).toEqual(
      ["prev-act-1", "prev-ev-1", "prev-ev-2", "prev-ev-3"],
    );
    expect(leads.map((l) => l.email).sort()).toEqual(["ann@example.com", "bob@example.com"]);
  });

  it("exports each site's manifest with every page, section, block and post", async () => {
    for (const siteId of ["demo", "acme"]) {
      const manifest = await exportManifest(sys.system.admin, siteId) as Json;
      expect(manifest.site.id).toBe(siteId);
      expect(counted(manifest), siteId).toEqual({
        pages: rowsIn("content.pages", siteId),
        sections: rowsIn("content.sections", siteId),
        blocks: rowsIn("content.blocks", siteId),
        posts: rowsIn("content.posts", siteId),
      });
      // Keys stay hashes: as many as the old release stored for the site.
      const keys = [...manifest.siteKeys, ...manifest.secretKeys, ...(manifest.reportKeys ?? [])];
      expect(keys.length).toBe(
        [...FIXTURE.matchAll(new RegExp(`^INSERT INTO auth\\.keys .*'${siteId}', '`, "gm"))].length,
      );
    }
  });

  it("serves the old content through the content API with the old keys", async () => {
    const read = async (path: string, key: string) => {
      const answer = await sys.get(path, { headers: { "x-crm-key": key } });
      return { status: answer.status, text: await answer.text() };
    };
    // The demo site's hero title as the old release stored it from the contract example.
    const title = await read("/content/v1/blocks/title?section=hero&lang=de", DEMO_KEY);
    expect(title.status).toBe(200);
    expect(title.text).toContain("Hallo");
    const post = await read("/content/v1/blog/hello-world?lang=en", DEMO_KEY);
    expect(post.status).toBe(200);
    expect(post.text).toContain("https://cdn.example/cover.png");
    for (const path of ["/content/v1/pages/home", "/content/v1/blog", "/content/v1/langs"]) {
      const answer = await read(path, ACME_KEY);
      expect(answer.status, path).toBe(200);
    }
    expect((await read("/content/v1/langs", ACME_KEY)).text).toContain("pt-BR");
  });

  it("answers the reports, added since, over the old rows", async () => {
    const { key } = await sys.system.admin.auth.createKey({
      siteId: "demo",
      kind: KeyKind.REPORT,
    });
    const answer = await sys.get("/stats/v1/query", {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": key },
      body: JSON.stringify({ metrics: ["pageviews", "visitors"], date_range: "today" }),
    });
    expect(answer.status).toBe(200);
    const body = await answer.json();
    // Visitors: the three that viewed pages and the one a server event named only.
    expect(body.results[0].metrics).toEqual([rowsIn("ingest.page_views"), 4]);
  });

  it("fills the old rows' page in the background, its progress in the migration status", async () => {
    const { admin } = sys.system;
    // The previous release stored no page; the backfills run once the schema is current.
    let status = await admin.ingest.migrationStatus({});
    while (status.backfills.some((b) => !b.finishedAt) || status.backfills.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await admin.ingest.migrationStatus({});
    }
    const done = Object.fromEntries(status.backfills.map((b) => [b.name, b]));
    expect(done.page_views_page).toMatchObject({
      doneRows: BigInt(rowsIn("ingest.page_views")),
      progress: 1,
    });
    expect(done.events_page.doneRows).toBe(BigInt(rowsIn("ingest.events")));
    const views = await exported(sys, "pageviews");
    expect(views).toHaveLength(rowsIn("ingest.page_views"));
  });
});
