/**
 * POST /stats/v1/query as HTTP, on every storage: report keys (from the
 * manifest, from `admin key create --kind report`, revoked; a site's own
 * data only; site and secret keys refused; the key before the body), the
 * per-key limit, the 16 KB body, invalid_body and invalid_query, meta's
 * date ranges, and `admin stats SITE_ID FILE` printing the same answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { beacon } from "./helpers/marketing.ts";
import { reportKeyOf, statsQuery, statsSite, storeRows } from "./helpers/stats.ts";
import { hashKey } from "../services/lib/keys.ts";
import { KeyKind } from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { reasonOf } from "../services/lib/errors.ts";
import { runAdmin } from "./helpers/admin.ts";
import { ManualClock } from "../services/lib/clock.ts";

const ALPHA = "alpha";
const BETA = "beta";
const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const today = (zone: string) => Temporal.Now.plainDateISO(zone);
const visits = { metrics: ["visits"], date_range: "today" };

describe.each(SYSTEM_STORAGES)("POST /stats/v1/query on %s", (storage) => {
  let sys: TestSystem;
  const adminEnv = () => ({
    AUTH_URL: sys.config.authUrl,
    CONTENT_URL: sys.config.contentUrl,
    INGEST_URL: sys.config.ingestUrl,
  });

  beforeAll(async () => {
    sys = await startTestSystem({
      storage,
      seed: await statsSite(ALPHA, "Europe/Berlin", {
        siteKeys: [SITE_KEY],
        secretKeys: [SECRET],
      }),
    });
    await importManifest(sys.system.admin, JSON.stringify(await statsSite(BETA, null)));
    await beacon(sys, "/marketing/view", { u: "https://alpha.example/", v: "a1", s: "a1" }, {
      origin: "https://alpha.example",
    });
    await beacon(sys, "/marketing/view", { u: "https://alpha.example/x", v: "a2", s: "a2" }, {
      origin: "https://alpha.example",
    });
    await beacon(sys, "/marketing/view", { u: "https://beta.example/", v: "b1", s: "b1" }, {
      origin: "https://beta.example",
    });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("reads the reports of the key's own site only", async () => {
    const alpha = await statsQuery(sys, visits, reportKeyOf(ALPHA));
    expect(alpha.status).toBe(200);
    expect(alpha.body.results).toEqual([{ dimensions: [], metrics: [2] }]);
    const beta = await statsQuery(sys, visits, reportKeyOf(BETA));
    expect(beta.body.results).toEqual([{ dimensions: [], metrics: [1] }]);
  });

  it("answers 401 invalid_key to a missing, malformed, unknown, site or secret key, before the body", async () => {
    const keys = [
      undefined,
      "",
      "rk_123",
      "rk_" + "A".repeat(48),
      "rk_" + "f".repeat(48),
      reportKeyOf(ALPHA) + "0",
      SITE_KEY,
      SECRET,
    ];
    for (const key of keys) {
      for (const body of [visits, "not json", `{"pad":"${"x".repeat(20_000)}"}`]) {
        const answer = await statsQuery(sys, body, key);
        expect([key, answer.status, answer.body]).toEqual([key, 401, { message: "invalid_key" }]);
      }
    }
  });

  it("takes report keys from admin key create --kind report, exports their hashes, revokes them", async () => {
    const created = await runAdmin(["key", "create", ALPHA, "--kind", "report"], adminEnv());
    expect(created.code).toBe(0);
    const { key, keyHash, kind } = JSON.parse(created.stdout);
    expect(key).toMatch(/^rk_[0-9a-f]{48}$/);
    expect([kind, keyHash]).toEqual(["report", hashKey(key)]);
    expect((await statsQuery(sys, visits, key)).body.results[0].metrics).toEqual([2]);

    const exported = await runAdmin(["export-site", ALPHA], adminEnv());
    const manifest = JSON.parse(exported.stdout);
    expect(manifest.reportKeys).toEqual([hashKey(reportKeyOf(ALPHA)), keyHash]);
    expect(Object.keys(manifest)).toEqual([
      "site",
      "siteKeys",
      "secretKeys",
      "reportKeys",
      "blog",
      "pages",
      "sections",
      "posts",
      "eventTypes",
    ]);
    expect(JSON.stringify(manifest)).not.toContain(key);

    const revoked = await runAdmin(["key", "revoke", key], adminEnv());
    expect(revoked.code).toBe(0);
    expect(await statsQuery(sys, visits, key)).toEqual({
      status: 401,
      body: { message: "invalid_key" },
    });
    expect((await statsQuery(sys, visits, reportKeyOf(ALPHA))).status).toBe(200);
  });

  it("keeps report keys of a manifest imported again, and refuses a key of another site", async () => {
    const again = await sys.system.admin.auth.importSite({
      manifestJson: JSON.stringify(
        await statsSite(ALPHA, "Europe/Berlin", {
          siteKeys: [SITE_KEY],
          secretKeys: [SECRET],
        }),
      ),
    });
    expect(again.changes).toEqual({});
    const stolen = await statsSite(BETA, null, { reportKeys: [reportKeyOf(ALPHA)] });
    const refusal = await sys.system.admin.auth.importSite({
      manifestJson: JSON.stringify(stolen),
      dryRun: true,
    }).catch((error) => reasonOf(error));
    expect(refusal).toMatchObject({
      reason: "invalid_manifest",
      fields: { path: "$.reportKeys[0]", problem: "belongs to another site" },
    });
    const created = await sys.system.admin.auth.createKey({
      siteId: BETA,
      kind: KeyKind.REPORT,
    });
    expect((await statsQuery(sys, visits, created.key)).body.results[0].metrics).toEqual([1]);
  });

  it("answers 413 over 16 KB and reads a body of exactly 16 KB", async () => {
    const sized = (bytes: number) => {
      const head = `{"metrics":["visits"],"date_range":"today","pad":"`;
      return head + "x".repeat(bytes - head.length - 2) + `"}`;
    };
    expect(sized(16 * 1024)).toHaveLength(16 * 1024);
    expect((await statsQuery(sys, sized(16 * 1024), reportKeyOf(ALPHA))).status).toBe(200);
    expect(await statsQuery(sys, sized(16 * 1024 + 1), reportKeyOf(ALPHA))).toEqual({
      status: 413,
      body: { message: "payload_too_large" },
    });
  });

  it("answers invalid_body to a body that is not a JSON object", async () => {
    for (const body of ["", "{", "[]", '"visits"', "null", "42"]) {
      const answer = await statsQuery(sys, body, reportKeyOf(ALPHA));
      expect([body, answer.status, answer.body.message]).toEqual([body, 400, "invalid_body"]);
    }
  });

  it("answers invalid_query naming the field and the problem of the first fault", async () => {
    const fault = async (body: Record<string, unknown>) =>
      (await statsQuery(sys, body, reportKeyOf(ALPHA))).body;
    expect(await fault({ date_range: "today" })).toEqual({
      message: "invalid_query",
      field: "metrics",
      problem: expect.any(String),
    });
    expect(
      await fault({
        ...visits,
        filters: [["is", "visit:os", ["x"]], ["like", "visit:os", ["y"]]],
        limit: 0,
      }),
    ).toMatchObject({ message: "invalid_query", field: "filters[1]" });
    expect(await fault({ metrics: ["conversion_rate"], date_range: "today" })).toMatchObject({
      field: "metrics[0]",
    });
    expect(await fault({ ...visits, date_range: ["2026-01-02", "2026-01-01"] })).toMatchObject({
      field: "date_range",
    });
  });

  it("covers the local days of every date range in the site's zone", async () => {
    const zone = "Europe/Berlin";
    const day = today(zone);
    const range = async (dateRange: unknown, key = reportKeyOf(ALPHA)) =>
      (await statsQuery(sys, { metrics: ["visits"], date_range: dateRange }, key)).body.meta;
    expect(await range("today")).toEqual({
      timeZone: zone,
      dateRange: [day.toString(), day.toString()],
      totalRows: 1,
    });
    const yesterday = day.subtract({ days: 1 }).toString();
    expect((await range("yesterday")).dateRange).toEqual([yesterday, yesterday]);
    expect((await range("7d")).dateRange).toEqual([
      day.subtract({ days: 6 }).toString(),
      day.toString(),
    ]);
    expect((await range("30d")).dateRange).toEqual([
      day.subtract({ days: 29 }).toString(),
      day.toString(),
    ]);
    expect((await range("month")).dateRange).toEqual([
      day.with({ day: 1 }).toString(),
      day.toString(),
    ]);
    expect((await range("year")).dateRange).toEqual([
      day.with({ month: 1, day: 1 }).toString(),
      day.toString(),
    ]);
    expect((await range(["2024-02-28", "2024-03-01"])).dateRange).toEqual([
      "2024-02-28",
      "2024-03-01",
    ]);
    // "all": from the first day with data, or today without any.
    expect((await range("all")).dateRange).toEqual([day.toString(), day.toString()]);
    await storeRows(sys, ALPHA, [{
      at: "2026-01-15T23:30:00Z", // 00:30 on the 16th in Berlin
      kind: "view",
      body: { u: "https://alpha.example/old", v: "old", s: "old" },
    }]);
    expect((await range("all")).dateRange).toEqual(["2026-01-16", day.toString()]);
    const zoneless = await statsQuery(
      sys,
      { metrics: ["visits"], date_range: "all" },
      reportKeyOf(BETA),
    );
    expect(zoneless.body.meta.timeZone).toBe("UTC");
    expect(zoneless.body.meta.dateRange).toEqual([
      today("UTC").toString(),
      today("UTC").toString(),
    ]);
  });

  it("answers only POST (and CORS preflights)", async () => {
    const get = await fetch(`${sys.url}/stats/v1/query`, {
      headers: { "x-report-key": reportKeyOf(ALPHA) },
    });
    expect(get.status).toBe(405);
    expect((await get.json()).message).toBe("method_not_allowed");
    const preflight = await fetch(`${sys.url}/stats/v1/query`, {
      method: "OPTIONS",
      headers: { origin: "https://crm.example", "access-control-request-headers": "x-report-key" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-report-key");
    await preflight.body?.cancel();
  });

  it("prints the endpoint's answer with admin stats SITE_ID FILE", async () => {
    const body = {
      metrics: ["visits", "pageviews", "visitors"],
      date_range: "all",
      dimensions: ["event:page", "time:day"],
      include: { totals: true },
    };
    const file = await Deno.makeTempFile({ suffix: ".json" });
    try {
      await Deno.writeTextFile(file, JSON.stringify(body));
      const printed = await runAdmin(["stats", ALPHA, file], adminEnv());
      expect(printed.code).toBe(0);
      const http = await statsQuery(sys, body, reportKeyOf(ALPHA));
      expect(JSON.parse(printed.stdout)).toEqual(http.body);
      expect(http.body.results.length).toBeGreaterThan(1);

      await Deno.writeTextFile(file, JSON.stringify({ ...body, limit: 0 }));
      const refused = await runAdmin(["stats", ALPHA, file], adminEnv());
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toContain("invalid_query");
      expect(refused.stderr).toContain('"field":"limit"');
      const unknown = await runAdmin(["stats", "no-such-site", file], adminEnv());
      expect(unknown.code).toBe(1);
    } finally {
      await Deno.remove(file);
    }
  });
});

describe("the report key's limit", () => {
  /** The system's time: it stands still, so the 601 queries fall in one minute however slow. */
  const clock = new ManualClock();
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({
      seed: await statsSite(ALPHA, "UTC"),
      env: { RATE_LIMIT_STATS_PER_KEY: "600" },
      clock,
    });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("answers 429 rate_limit_exceeded past 600 queries a minute, per report key", async () => {
    const key = reportKeyOf(ALPHA);
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) statuses.push((await statsQuery(sys, "[]", key)).status);
    expect(new Set(statuses)).toEqual(new Set([400]));
    expect(await statsQuery(sys, visits, key)).toEqual({
      status: 429,
      body: { message: "rate_limit_exceeded" },
    });
    const other = await sys.system.admin.auth.createKey({ siteId: ALPHA, kind: KeyKind.REPORT });
    expect((await statsQuery(sys, visits, other.key)).status).toBe(200);
    // An unknown key is refused as such, not counted against anyone.
    expect((await statsQuery(sys, visits, "rk_" + "e".repeat(48))).status).toBe(401);
  });
});
