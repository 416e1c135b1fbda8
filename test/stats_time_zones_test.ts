/**
 * Days, weeks, months and hours local to the site's zone, on every storage:
 * sites in far-apart zones, the 23- and 25-hour days of a daylight-saving
 * change and the repeated hour as two labels, zones 30 and 45 minutes off
 * the hour, a site without a zone (the query's, else UTC), an import that
 * changes the zone, sessions across midnight and across the range's edge,
 * and answers that do not depend on the database session's zone (the
 * process's zone: test/system/stats_process_zone_test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { DATABASE_URL, SYSTEM_STORAGES } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { beacon, exported } from "./helpers/marketing.ts";
import { BERLIN_ROWS, expectBerlinAnswers, view } from "./helpers/berlin_day.ts";
import { reportKeyOf, statsQuery, statsRows, statsSite, storeRows } from "./helpers/stats.ts";
import { importManifest } from "../services/cli/site_manifest.ts";

const ZONES: Record<string, string | null> = {
  kiri: "Pacific/Kiritimati",
  pago: "Pacific/Pago_Pago",
  berlin: "Europe/Berlin",
  kathmandu: "Asia/Kathmandu",
  adelaide: "Australia/Adelaide",
  chatham: "Pacific/Chatham",
  unzoned: null,
};

describe.each(SYSTEM_STORAGES)("report days and hours on %s", (storage) => {
  let sys: TestSystem;
  const rows = (site: string, body: Record<string, unknown>) => statsRows(sys, site, body);

  beforeAll(async () => {
    sys = await startTestSystem({ storage, seed: await statsSite("berlin", ZONES.berlin) });
    for (const [site, zone] of Object.entries(ZONES)) {
      if (site !== "berlin") {
        await importManifest(sys.system.admin, JSON.stringify(await statsSite(site, zone)));
      }
    }
    await storeRows(sys, "berlin", BERLIN_ROWS);
    for (const site of ["kiri", "pago"]) {
      await storeRows(sys, site, [view("2026-05-01T10:30:00Z", "/")]);
    }
    await storeRows(sys, "kathmandu", [
      view("2026-06-01T04:14:59Z", "/"),
      view("2026-06-01T04:15:00Z", "/"),
      view("2026-06-01T18:14:59Z", "/"),
      view("2026-06-01T18:15:00Z", "/"),
    ]);
    // Adelaide leaves daylight saving at 03:00 +10:30 (16:30 UTC) on 5 April 2026.
    await storeRows(sys, "adelaide", [
      view("2026-04-04T15:45:00Z", "/"),
      view("2026-04-04T16:45:00Z", "/"),
    ]);
    await storeRows(sys, "chatham", [
      view("2026-05-31T11:14:59Z", "/"),
      view("2026-05-31T11:15:00Z", "/"),
    ]);
    await storeRows(sys, "unzoned", [view("2026-05-01T22:30:00Z", "/")]);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("puts one instant on different days and hours in far-apart zones", async () => {
    const body = {
      metrics: ["pageviews"],
      date_range: ["2026-04-29", "2026-05-03"],
      dimensions: ["time:day", "time:hour"],
    };
    expect(await rows("kiri", body)).toEqual([["2026-05-02", "2026-05-02T00:00:00+14:00", 1]]);
    expect(await rows("pago", body)).toEqual([["2026-04-30", "2026-04-30T23:00:00-11:00", 1]]);
    expect(await rows("kiri", { ...body, date_range: ["2026-05-01", "2026-05-01"] })).toEqual([]);
  });

  it("counts today in each site's own zone", async () => {
    for (const site of ["kiri", "pago"]) {
      const res = await beacon(
        sys,
        "/marketing/view",
        { u: `https://${site}.example/now`, v: "n" },
        {
          origin: `https://${site}.example`,
        },
      );
      expect(res.status).toBe(204);
      const answer = await statsQuery(
        sys,
        { metrics: ["pageviews"], date_range: "today" },
        reportKeyOf(site),
      );
      const today = Temporal.Now.plainDateISO(ZONES[site]!).toString();
      expect(answer.body.meta).toEqual({
        timeZone: ZONES[site],
        dateRange: [today, today],
        totalRows: 1,
      });
      expect(answer.body.results[0].metrics).toEqual([1]);
    }
  });

  it("gives 23- and 25-hour days and the repeated hour twice in Berlin", async () => {
    await expectBerlinAnswers(sys);
  });

  it("starts hours at a quarter past in Kathmandu (+05:45) and days at 18:15 UTC", async () => {
    expect(
      await rows("kathmandu", {
        metrics: ["pageviews"],
        date_range: ["2026-06-01", "2026-06-02"],
        dimensions: ["time:day", "time:hour"],
      }),
    ).toEqual([
      ["2026-06-01", "2026-06-01T09:00:00+05:45", 1],
      ["2026-06-01", "2026-06-01T10:00:00+05:45", 1],
      ["2026-06-01", "2026-06-01T23:00:00+05:45", 1],
      ["2026-06-02", "2026-06-02T00:00:00+05:45", 1],
    ]);
  });

  it("repeats the 02:00 hour of Adelaide (+10:30 to +09:30) with both offsets", async () => {
    expect(
      await rows("adelaide", {
        metrics: ["pageviews"],
        date_range: ["2026-04-05", "2026-04-05"],
        dimensions: ["time:hour"],
      }),
    ).toEqual([["2026-04-05T02:00:00+10:30", 1], ["2026-04-05T02:00:00+09:30", 1]]);
  });

  it("starts Chatham Islands days at 11:15 UTC (+12:45)", async () => {
    expect(
      await rows("chatham", {
        metrics: ["pageviews"],
        date_range: ["2026-05-31", "2026-06-01"],
        dimensions: ["time:day"],
      }),
    ).toEqual([["2026-05-31", 1], ["2026-06-01", 1]]);
  });

  it("uses the query's time_zone while the site has none, else UTC; a zoned site ignores it", async () => {
    const body = {
      metrics: ["pageviews"],
      date_range: ["2026-05-01", "2026-05-02"],
      dimensions: ["time:day"],
    };
    const utc = await statsQuery(sys, body, reportKeyOf("unzoned"));
    expect(utc.body.meta.timeZone).toBe("UTC");
    expect(utc.body.results).toEqual([{ dimensions: ["2026-05-01"], metrics: [1] }]);
    const tokyo = await statsQuery(
      sys,
      { ...body, time_zone: "Asia/Tokyo" },
      reportKeyOf("unzoned"),
    );
    expect(tokyo.body.meta.timeZone).toBe("Asia/Tokyo");
    expect(tokyo.body.results).toEqual([{ dimensions: ["2026-05-02"], metrics: [1] }]);
    const zoned = await statsQuery(sys, {
      metrics: ["pageviews"],
      date_range: ["2026-03-29", "2026-03-29"],
      time_zone: "Asia/Tokyo",
    }, reportKeyOf("berlin"));
    expect(zoned.body.meta.timeZone).toBe("Europe/Berlin");
    expect(zoned.body.results[0].metrics).toEqual([46]);
  });

  it("moves past data's buckets at once when an import changes the zone, rows unchanged", async () => {
    const body = {
      metrics: ["pageviews"],
      date_range: ["2026-04-30", "2026-05-03"],
      dimensions: ["time:day"],
    };
    const before = await exported(sys, "pageviews", "unzoned");
    await importManifest(
      sys.system.admin,
      JSON.stringify(await statsSite("unzoned", "Asia/Tokyo")),
    );
    expect(await rows("unzoned", body)).toEqual([["2026-05-02", 1]]);
    await importManifest(
      sys.system.admin,
      JSON.stringify(await statsSite("unzoned", "America/New_York")),
    );
    expect(await rows("unzoned", { ...body, time_zone: "Asia/Tokyo" })).toEqual([[
      "2026-05-01",
      1,
    ]]);
    await importManifest(sys.system.admin, JSON.stringify(await statsSite("unzoned", null)));
    expect(await rows("unzoned", body)).toEqual([["2026-05-01", 1]]);
    const exportedSite = await sys.system.admin.ingest.exportSite({ siteId: "unzoned" });
    expect(JSON.parse(exportedSite.manifestJson).site).toEqual({ timeZone: null });
    expect(await exported(sys, "pageviews", "unzoned")).toEqual(before);
  });

  it("counts a visit across midnight on its first day, its rows each on their own", async () => {
    const metrics = [
      "visits",
      "pageviews",
      "visitors",
      "events",
      "views_per_visit",
      "visit_duration",
      "bounce_rate",
    ];
    const late = { metrics, filters: [["contains", "visit:entry_page", ["/late"]]] };
    expect(
      await rows("berlin", {
        ...late,
        date_range: ["2026-05-10", "2026-05-11"],
        dimensions: ["time:day"],
      }),
    )
      .toEqual([
        ["2026-05-10", 1, 1, 1, 0, 2, 1800, 0],
        ["2026-05-11", 0, 1, 1, 1, 0, 0, 0],
      ]);
    // A range that cuts the visit counts only its rows inside the range.
    expect(await rows("berlin", { ...late, date_range: ["2026-05-11", "2026-05-11"] })).toEqual([
      [1, 1, 1, 1, 1, 600, 0],
    ]);
    expect(await rows("berlin", { ...late, date_range: ["2026-05-10", "2026-05-10"] })).toEqual([
      [1, 1, 1, 0, 1, 0, 100],
    ]);
  });
});

describe.each(SYSTEM_STORAGES)("answers that ignore the database session's zone, %s", (storage) => {
  let sys: TestSystem;
  let dropDatabase = () => Promise.resolve();

  beforeAll(async () => {
    let databaseUrl: string | undefined;
    if (storage === "postgres") {
      const fresh = await freshPostgresUrl({ migrated: true });
      dropDatabase = fresh.drop;
      databaseUrl = fresh.url;
      const admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
      await admin.unsafe(
        `alter database ${new URL(fresh.url).pathname.slice(1)} set timezone to 'Pacific/Chatham'`,
      );
      await admin.end();
    }
    sys = await startTestSystem({
      storage,
      databaseUrl,
      seed: await statsSite("berlin", ZONES.berlin),
    });
    if (storage === "pglite") await sys.system.platform.db!.exec("set time zone 'Pacific/Chatham'");
    const [{ zone }] = await sys.system.platform.db!.query<{ zone: string }>(
      "select current_setting('TimeZone') as zone",
    );
    expect(zone).toBe("Pacific/Chatham");
    await storeRows(sys, "berlin", BERLIN_ROWS);
  });
  afterAll(async () => {
    await sys?.close();
    await dropDatabase();
  });

  it("gives Berlin's days and hours", async () => {
    await expectBerlinAnswers(sys);
  });
});
