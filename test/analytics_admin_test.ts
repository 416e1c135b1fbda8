/**
 * The analytics admin commands as an operator runs them (the command line's
 * `main`, run in this process by `runAdmin`), and retention and visitor
 * deletion on every storage: whole partitions dropped, rows past the cutoff
 * deleted, leads kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, beacon, exported, type Json, postEvent } from "./helpers/marketing.ts";
import { listPartitions, Partitions } from "../services/ingest/partitions.ts";
import type { Database } from "../services/lib/db/mod.ts";
import { runAdmin } from "./helpers/admin.ts";

const DAY = 86_400_000;

describe("analytics commands of deno task admin", () => {
  let sys: TestSystem;
  let env: Record<string, string>;

  beforeAll(async () => {
    sys = await startTestSystem({ seed: await analyticsManifest(), env: { ADMIN_TOKEN: "t0k" } });
    env = { INGEST_URL: sys.config.ingestUrl, ADMIN_TOKEN: "t0k" };
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("prints events and page views as NDJSON, oldest first, with --since", async () => {
    for (let i = 0; i < 3; i++) {
      await postEvent(sys, { name: "note", id: `cli-${i}`, vid: "cli-visitor", p: { n: i } });
      await beacon(sys, "/marketing/view", {
        v: "cli-visitor",
        s: "cli-s",
        u: `https://demo.example/${i}`,
      });
    }
    const events = await runAdmin(["events", "export", "demo"], env);
    expect(events.code).toBe(0);
    const lines = events.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((e) => e.eventId)).toEqual(["cli-0", "cli-1", "cli-2"]);
    expect(lines[1]).toMatchObject({ name: "note", params: { n: 1 }, source: "server" });
    const views = await runAdmin(["pageviews", "export", "demo"], env);
    const viewLines = views.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(viewLines.map((v) => v.url)).toEqual([0, 1, 2].map((i) => `https://demo.example/${i}`));
    const since = viewLines[2].receivedAt;
    const later = await runAdmin(["pageviews", "export", "demo", "--since", since], env);
    expect(later.stdout.trim().split("\n").map((l) => JSON.parse(l).url)).toContain(
      "https://demo.example/2",
    );
    expect(later.stdout).not.toContain("https://demo.example/0");
  });

  it("rebuilds a site's visits from its rows and prints what it changed", async () => {
    for (let i = 0; i < 3; i++) {
      await beacon(sys, "/marketing/view", { v: "rb", s: "rb-s", u: `https://demo.example/r${i}` });
    }
    const db = sys.system.platform.db!;
    const visit = async () => {
      const [row] = await db.query<{ pageviews: number; exit_page: string }>(
        "select pageviews, exit_page from ingest.visits where site_id = 'demo' and visit_key = 'srb-s'",
      );
      return row;
    };
    const right = await visit();
    expect(right).toEqual({ pageviews: 3, exit_page: "/r2" });
    // A visit gone wrong (as after a bug, say) and another lost.
    await db.query(
      "update ingest.visits set pageviews = 9, exit_page = '/x' where site_id = 'demo' and visit_key = 'srb-s'",
    );
    await db.query(
      `delete from ingest.visits where ctid =
         (select ctid from ingest.visits where site_id = 'demo' and visit_key <> 'srb-s' limit 1)`,
    );

    const rebuilt = await runAdmin(["stats", "rebuild", "demo"], env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const report = JSON.parse(rebuilt.stdout);
    expect(report.tables).toEqual({ "ingest.visits": { added: 1, removed: 0, changed: 1 } });
    expect(await visit()).toEqual(right);
    const again = JSON.parse((await runAdmin(["stats", "rebuild", "demo"], env)).stdout);
    expect(again.tables).toEqual({ "ingest.visits": { added: 0, removed: 0, changed: 0 } });
    const unknown = await runAdmin(["stats", "rebuild", "no-such-site"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("site_not_found");
  });

  it("refuses a bad --since and an unknown site with one line and a non-zero exit", async () => {
    const bad = await runAdmin(["events", "export", "demo", "--since", "yesterday"], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    const unknown = await runAdmin(["events", "export", "no-such-site"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("site_not_found");
  });

  it("deletes a visitor's page views and events, and leads only with --leads", async () => {
    const visitor = uniqueId("gone-");
    await beacon(sys, "/marketing/view", { v: visitor, s: visitor, u: "https://demo.example/" });
    await postEvent(sys, { name: "note", sid: visitor });
    await beacon(sys, "/marketing/lead", { email: "x@example.com", v: visitor, s: visitor });
    await beacon(sys, "/marketing/view", { v: "keeper", u: "https://demo.example/" });

    const first = await runAdmin(["visitor", "delete", "demo", visitor], env);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).deleted).toMatchObject({
      pageViews: 1,
      events: 1,
      visitors: 1,
      leads: 0,
    });
    expect((await exported(sys, "pageviews")).some((v) => v.visitorId === visitor)).toBe(false);
    expect((await exported(sys, "events")).some((e) => e.sessionId === visitor)).toBe(false);
    expect((await exported(sys, "leads")).some((l) => l.visitorId === visitor)).toBe(true);
    expect((await exported(sys, "pageviews")).some((v) => v.visitorId === "keeper")).toBe(true);

    const second = await runAdmin(["visitor", "delete", "demo", visitor, "--leads"], env);
    expect(JSON.parse(second.stdout).deleted.leads).toBe(1);
    expect((await exported(sys, "leads")).some((l) => l.visitorId === visitor)).toBe(false);
  });

  it("runs retention, keeping what is younger than RETENTION_DAYS and every lead", async () => {
    const before = await exported(sys, "events");
    const run = await runAdmin(["retention", "run"], { ...env, RETENTION_DAYS: "1" });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ retentionDays: 1, leads: "kept" });
    expect(await exported(sys, "events")).toEqual(before);
  });
});

/** Rows inserted as if received `daysAgo` days ago (the partitions made as ingest would). */
async function insertOld(db: Database, daysAgo: number, tag: string) {
  const at = new Date(Date.now() - daysAgo * DAY).toISOString();
  await new Partitions(db).ensure([Date.parse(at)]);
  await db.query(
    `insert into ingest.events (site_id, received_at, name, event_id, visitor_id, params, source)
     values ('demo', $1::text::timestamptz, 'note', $2, 'old-visitor', '{}', 'server')`,
    [at, tag],
  );
  await db.query(
    `insert into ingest.event_ids (site_id, event_id, received_at) values ('demo', $1, $2::text::timestamptz)`,
    [tag, at],
  );
  await db.query(
    `insert into ingest.page_views (site_id, received_at, visitor_id, url, click_ids, ad_cookies, bot)
     values ('demo', $1::text::timestamptz, 'old-visitor', $2, '{}', '{}', false)`,
    [at, `https://demo.example/${tag}`],
  );
  await db.query(
    `insert into ingest.leads (id, site_id, received_at, source, email, fields)
     values (gen_random_uuid(), 'demo', $1::text::timestamptz, 'server', $2, '{}')`,
    [at, `${tag}@example.com`],
  );
}

describe.each(SYSTEM_STORAGES)("retention on %s", (storage) => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await analyticsManifest() });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("drops whole months past the cutoff, deletes older rows of the month it falls in, keeps leads", async () => {
    const db = sys.system.platform.db!;
    await insertOld(db, 500, "ancient");
    await insertOld(db, 396, "just-expired");
    await insertOld(db, 394, "kept-old");
    await postEvent(sys, { name: "note", id: "fresh" });
    const partitionsBefore = await listPartitions(db);
    expect(partitionsBefore.some((p) => p.to <= Date.now() - 450 * DAY)).toBe(true);

    const answer = await sys.system.admin.ingest.runRetention({});
    expect(answer.retentionDays).toBe(395);
    expect(answer.droppedPartitions.length).toBeGreaterThanOrEqual(2);
    const ids = (await exported(sys, "events")).map((e) => e.eventId);
    expect(ids).toContain("kept-old");
    expect(ids).toContain("fresh");
    expect(ids).not.toContain("ancient");
    expect(ids).not.toContain("just-expired");
    const urls = (await exported(sys, "pageviews")).map((v) => v.url);
    expect(urls).toContain("https://demo.example/kept-old");
    expect(urls).not.toContain("https://demo.example/just-expired");
    const emails = (await exported(sys, "leads")).map((l: Json) => l.email);
    expect(emails).toEqual(
      expect.arrayContaining([
        "ancient@example.com",
        "just-expired@example.com",
        "kept-old@example.com",
      ]),
    );
    // The expired ids are forgotten with their events; younger ones still deduplicate.
    expect(await (await postEvent(sys, { name: "note", id: "kept-old" })).json()).toMatchObject({
      duplicate: true,
    });
    const after = await listPartitions(db);
    expect(after.every((p) => p.to > Date.now() - 395 * DAY)).toBe(true);
    expect(after.some((p) => p.from <= Date.now() && Date.now() < p.to)).toBe(true);
  });

  it("keeps nothing with a retention of 0 days, leads excepted", async () => {
    await postEvent(sys, { name: "note", id: uniqueId("zero-") });
    await sys.system.admin.ingest.runRetention({ retentionDays: 0 });
    expect(await exported(sys, "events")).toEqual([]);
    expect(await exported(sys, "pageviews")).toEqual([]);
    expect((await exported(sys, "leads")).length).toBeGreaterThanOrEqual(3);
  });
});
