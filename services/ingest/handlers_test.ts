/**
 * ingest-service's handlers through Connect's in-memory transport on
 * PGlite: its part of a site import, a batch of items with each outcome
 * (stored, duplicate, refused with its typed detail), the exports, visitor
 * deletion, retention, the reports and their rebuild, and the admin
 * services' typed errors (Code and ErrorDetail).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, Code } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type EventRow,
  IngestAdminService,
  type IngestItemSchema,
  IngestService,
  type ItemResult,
  type LeadRow,
  Outcome,
  type PageViewRow,
  Source,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { ManualClock } from "../lib/clock.ts";
import { publicFields, reasonOf } from "../lib/errors.ts";
import { answerJson, queryBodyOf } from "../lib/stats/wire.ts";
import { type InMemoryService, inMemoryService } from "../../test/helpers/in_memory.ts";
import { readFixture } from "../../test/helpers/system.ts";
import { eventOf, leadOf, pageViewOf } from "../gateway/ingest_body.ts";
import { ingestService } from "./main.ts";
import { countOutcomes } from "./handlers.ts";
import type { RawItem } from "./prepare.ts";

const DAY = 86_400_000;
const CHROME =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
type Item = MessageInitShape<typeof IngestItemSchema>;
const refusal = (call: Promise<unknown>) => call.then(() => undefined, reasonOf);

describe("ingest-service through an in-memory transport", () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  let service: InMemoryService;
  let ingest: Client<typeof IngestService>;
  let admin: Client<typeof IngestAdminService>;
  let site: Client<typeof SiteAdminService>;
  let stats: Client<typeof StatsService>;
  // deno-lint-ignore no-explicit-any
  let manifest: any;

  const item = (body: Item["body"], source = Source.SERVER): Item => ({
    source,
    siteId: "demo",
    receivedAtMs: BigInt(clock.now()),
    clientIp: "203.0.113.9",
    userAgent: CHROME,
    body,
  });
  const event = (json: Record<string, unknown>) => item({ case: "event", value: eventOf(json) });
  const view = (json: Record<string, unknown>) =>
    item({ case: "pageView", value: pageViewOf(json, { gpc: false }) }, Source.BROWSER);
  const lead = (json: Record<string, unknown>) =>
    item({ case: "lead", value: leadOf(json) }, Source.BROWSER);
  /** Every row of an export, read two rows a page so the cursor is used. */
  async function allRows(kind: "exportEvents", sinceMs?: bigint): Promise<EventRow[]>;
  async function allRows(kind: "exportPageViews", sinceMs?: bigint): Promise<PageViewRow[]>;
  async function allRows(kind: "exportLeads", sinceMs?: bigint): Promise<LeadRow[]>;
  async function allRows(
    kind: "exportEvents" | "exportPageViews" | "exportLeads",
    sinceMs?: bigint,
  ): Promise<unknown[]> {
    const rows: unknown[] = [];
    let cursor = "";
    do {
      const page = await admin[kind]({ siteId: "demo", cursor, sinceMs, pageSize: 2 });
      rows.push(...page.rows);
      cursor = page.nextCursor;
    } while (cursor !== "");
    return rows;
  }

  beforeAll(async () => {
    service = await inMemoryService(ingestService, { clock, env: { ADMIN_TOKEN: "t0k" } });
    ingest = service.client(IngestService);
    admin = service.client(IngestAdminService, { adminToken: "t0k" });
    site = service.client(SiteAdminService, { adminToken: "t0k" });
    stats = service.client(StatsService);
    manifest = await readFixture("contract-example.json");
  });
  afterAll(async () => {
    await service?.close();
  });

  it("stores nothing on a dry run; stores the time zone and event types on the import", async () => {
    const manifestJson = JSON.stringify(manifest);
    await site.importSite({ manifestJson, dryRun: true });
    expect(await refusal(site.exportSite({ siteId: "demo" }))).toMatchObject({
      code: Code.NotFound,
      reason: "site_not_found",
      fields: { siteId: "demo" },
    });
    expect(Object.keys((await site.importSite({ manifestJson })).changes).length)
      .toBeGreaterThan(0);
    expect((await site.importSite({ manifestJson })).changes).toEqual({});
    const part = JSON.parse((await site.exportSite({ siteId: "demo" })).manifestJson);
    expect(part.site).toEqual({ timeZone: "Europe/Berlin" });
    expect(part.eventTypes.map((t: { name: string }) => t.name)).toEqual(["signup"]);
  });

  it("answers each item of a batch: stored, duplicate or refused with its typed detail", async () => {
    const { results } = await ingest.ingest({
      items: [
        view({ v: "vis-1", s: "ses-1", u: "https://demo.example/pricing?utm_source=news" }),
        event({ name: "signup", id: "ev-1", vid: "vis-1", p: { plan: "pro", seats: 3 } }),
        event({ name: "signup", id: "ev-1", vid: "vis-1", p: { plan: "pro", seats: 3 } }),
        event({ name: "never_declared", id: "ev-2" }),
        event({ name: "signup", id: "ev-3", value: -1 }),
        lead({ email: "ann@example.com", v: "vis-1", s: "ses-1" }),
        { siteId: "demo" },
      ],
    });
    expect(results.map((r) => Outcome[r.outcome])).toEqual([
      "STORED",
      "STORED",
      "DUPLICATE",
      "REFUSED",
      "REFUSED",
      "STORED",
      "REFUSED",
    ]);
    const [, , , unknown, invalid, stored, empty] = results;
    expect([unknown.code, unknown.error?.reason, publicFields(unknown.error)]).toEqual([
      Code.InvalidArgument,
      "unknown_event",
      { name: "never_declared" },
    ]);
    expect([invalid.code, invalid.error?.reason]).toEqual([Code.InvalidArgument, "invalid_body"]);
    expect(publicFields(invalid.error)).toMatchObject({ field: "value" });
    expect(stored.id).not.toBe("");
    expect([empty.code, empty.error?.reason]).toEqual([Code.InvalidArgument, "invalid_item"]);
    // Sent again in a later call, the event is a duplicate too.
    const again = await ingest.ingest({
      items: [event({ name: "signup", id: "ev-1", vid: "vis-1" })],
    });
    expect(again.results.map((r) => Outcome[r.outcome])).toEqual(["DUPLICATE"]);
  });

  it("accepts an event type imported a moment ago while the clock stands still", async () => {
    const note = event({ name: "note", id: "ev-note" });
    expect((await ingest.ingest({ items: [note] })).results[0].error?.reason).toBe(
      "unknown_event",
    );
    const withNote = {
      ...manifest,
      eventTypes: [...manifest.eventTypes, { name: "note", title: "Note", params: [] }],
    };
    await site.importSite({ manifestJson: JSON.stringify(withNote) });
    expect(Outcome[(await ingest.ingest({ items: [note] })).results[0].outcome]).toBe("STORED");
  });

  it("exports stored rows oldest first, page by page and since a time", async () => {
    clock.advance(60_000);
    const later = BigInt(clock.now());
    await ingest.ingest({
      items: [view({ v: "vis-2", s: "ses-2", u: "https://demo.example/later" })],
    });
    const views = await allRows("exportPageViews");
    expect(views.map((v) => [v.url, v.visitorId])).toEqual([
      ["https://demo.example/pricing?utm_source=news", "vis-1"],
      ["https://demo.example/later", "vis-2"],
    ]);
    // Enriched from the client's address and user agent; the address is kept truncated only.
    expect([views[0].ip, views[0].browser]).toEqual(["203.0.113.0", "Chrome"]);
    expect((await allRows("exportPageViews", later)).map((v) => v.url)).toEqual([
      "https://demo.example/later",
    ]);
    expect((await allRows("exportEvents")).map((e) => e.eventId)).toEqual(["ev-1", "ev-note"]);
    expect((await allRows("exportLeads")).map((l) => l.email)).toEqual(["ann@example.com"]);
  });

  it("answers reports and rebuilds their tables without changes when they are right", async () => {
    const answer = await stats.query({
      siteId: "demo",
      body: queryBodyOf({ metrics: ["pageviews"], date_range: "today" }),
    });
    expect(answerJson(answer)).toMatchObject({ results: [{ metrics: [2] }] });
    const rebuilt = await admin.rebuildStats({ siteId: "demo" });
    expect(rebuilt.tables.length).toBeGreaterThan(0);
    for (const table of rebuilt.tables) {
      expect([table.table, table.added, table.removed, table.changed]).toEqual([
        table.table,
        0n,
        0n,
        0n,
      ]);
    }
  });

  it("deletes a visitor's rows, and its leads only when asked", async () => {
    const first = await admin.deleteVisitor({ siteId: "demo", visitorId: "vis-1" });
    expect(first.deleted).toMatchObject({ pageViews: 1n, events: 1n });
    expect((await allRows("exportLeads")).length).toBe(1);
    const second = await admin.deleteVisitor({ siteId: "demo", visitorId: "vis-1", leads: true });
    expect(second.deleted).toMatchObject({ pageViews: 0n, leads: 1n });
    expect(await allRows("exportLeads")).toEqual([]);
    expect((await allRows("exportPageViews")).map((v) => v.visitorId)).toEqual(["vis-2"]);
  });

  it("deletes rows past the retention cutoff on the injected clock", async () => {
    clock.advance(3 * DAY);
    const report = await admin.runRetention({ retentionDays: 1 });
    expect(report.retentionDays).toBe(1);
    expect(report.cutoffMs).toBe(BigInt(clock.now() - DAY));
    expect(await allRows("exportPageViews")).toEqual([]);
    expect(await allRows("exportEvents")).toEqual([]);
  });

  it("refuses admin requests with typed errors", async () => {
    const siteNotFound = {
      code: Code.NotFound,
      reason: "site_not_found",
      fields: { siteId: "nosuch" },
    };
    expect(await refusal(admin.exportEvents({ siteId: "nosuch", cursor: "" }))).toMatchObject(
      siteNotFound,
    );
    expect(await refusal(admin.deleteVisitor({ siteId: "nosuch", visitorId: "v" })))
      .toMatchObject(siteNotFound);
    expect(await refusal(admin.rebuildStats({ siteId: "nosuch" }))).toMatchObject(siteNotFound);
    expect(await refusal(admin.exportPageViews({ siteId: "demo", cursor: "garbage" })))
      .toMatchObject({ code: Code.InvalidArgument, reason: "invalid_cursor" });
    expect(await refusal(admin.deleteVisitor({ siteId: "demo", visitorId: "" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "invalid_visitor_id",
    });
    expect(await refusal(admin.runRetention({ retentionDays: -1 }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "invalid_retention_days",
    });
    expect(await service.client(IngestAdminService).runRetention({}).catch((e) => e.code)).toBe(
      Code.Unauthenticated,
    );
  });
});

describe("counting ingest's answers (crm.ingest.items)", () => {
  const item = (siteId: string, kind: "event" | "pageView") =>
    ({ siteId, body: { case: kind, value: {} } }) as unknown as RawItem;
  const result = (outcome: Outcome, reason?: string) =>
    ({ outcome, ...(reason ? { error: { reason } } : {}) }) as unknown as ItemResult;
  const raw = [item("a", "event"), item("b", "event"), item("a", "event"), item("a", "pageView")];
  const results = [
    result(Outcome.STORED),
    result(Outcome.STORED),
    result(Outcome.REFUSED, "unknown_event"),
    result(Outcome.STORED),
  ];
  const counted = (perSite: boolean) => {
    const adds: [number, Record<string, string>][] = [];
    countOutcomes(raw, results, perSite, (n, attributes) => adds.push([n, attributes]));
    return adds;
  };

  it("adds once per set of attributes, and names no site by default", () => {
    expect(counted(false)).toEqual([
      [2, { "crm.ingest.kind": "event", "crm.ingest.outcome": "stored" }],
      [1, {
        "crm.ingest.kind": "event",
        "crm.ingest.outcome": "refused",
        "crm.ingest.reason": "unknown_event",
      }],
      [1, { "crm.ingest.kind": "pageView", "crm.ingest.outcome": "stored" }],
    ]);
  });

  it("names the site when asked (METRICS_PER_SITE)", () => {
    const adds = counted(true);
    expect(adds.map(([n, a]) => [n, a["crm.site.id"], a["crm.ingest.kind"]])).toEqual([
      [1, "a", "event"],
      [1, "b", "event"],
      [1, "a", "event"],
      [1, "a", "pageView"],
    ]);
    expect(adds.reduce((sum, [n]) => sum + n, 0)).toBe(raw.length);
  });
});
