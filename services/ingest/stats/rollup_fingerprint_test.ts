/**
 * The rollups' fingerprint: made from the declarations alone, the same on
 * every run and in another process, another for any change of what a rollup
 * holds; and on both storages, a period stored with another fingerprint is
 * not read (its days come from the rows, the answers unchanged) and is built
 * again by the builder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VisitDimension } from "../../lib/stats/vocabulary.ts";
import { SYSTEM_STORAGES } from "../../../test/helpers/env.ts";
import type { FreshDatabase } from "../../../test/helpers/storage.ts";
import {
  answersOf,
  databaseWithTraffic,
  TRAFFIC_FROM,
  TRAFFIC_QUERY,
  TRAFFIC_TO,
} from "../../../test/helpers/stats_traffic.ts";
import type { Database } from "../../lib/db/mod.ts";
import type { Json } from "../../lib/stats/wire.ts";
import { type RollupDeclarations, rollupFingerprint, rulesProbe } from "./rollup_fingerprint.ts";
import {
  buildRollups,
  ROLLUP_DECLARATIONS,
  ROLLUP_FINGERPRINT,
  rollupSite,
  storedRow,
} from "./rollups.ts";

const D = ROLLUP_DECLARATIONS;
const COLUMNS = D.attributes.map((a) => a.column);

describe("the rollups' fingerprint", () => {
  it("is the SHA-256 of the declarations, whatever the order of their members", () => {
    expect(ROLLUP_FINGERPRINT).toMatch(/^[0-9a-f]{64}$/);
    expect(rollupFingerprint(D)).toBe(ROLLUP_FINGERPRINT);
    const reordered = Object.fromEntries(Object.entries(D).reverse()) as RollupDeclarations;
    expect(rollupFingerprint(structuredClone(reordered))).toBe(ROLLUP_FINGERPRINT);
  });

  it("is the same in another process", async () => {
    const module = new URL("./rollups.ts", import.meta.url).href;
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const { ROLLUP_FINGERPRINT } = await import(${JSON.stringify(module)});
         console.log(ROLLUP_FINGERPRINT);`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    expect(output.success).toBe(true);
    expect(new TextDecoder().decode(output.stdout).trim()).toBe(ROLLUP_FINGERPRINT);
  });

  const country = D.attributes.find((a) => a.column === "country")!;
  const changes: [string, RollupDeclarations][] = [
    [
      "an attribute read another way",
      {
        ...D,
        attributes: D.attributes.map((a) =>
          a === country ? { ...a, fromPageView: "upper(x.country)" } : a
        ),
      },
    ],
    [
      "an attribute added",
      {
        ...D,
        attributes: [...D.attributes, {
          dimension: "visit:region" as VisitDimension,
          column: "region",
        }],
      },
    ],
    ["an attribute left out", { ...D, attributes: D.attributes.filter((a) => a !== country) }],
    [
      "an attribute's column renamed",
      {
        ...D,
        attributes: D.attributes.map((a) => a === country ? { ...a, column: "land" } : a),
      },
    ],
    ["a dimension renamed", { ...D, dimensions: { ...D.dimensions, page: "event:path" } }],
    ["a sum added", { ...D, sums: [...D.sums, "sessions"] }],
    [
      "a statement changed",
      { ...D, statements: { ...D.statements, rows: `${D.statements.rows} limit 1` } },
    ],
    [
      "a rule changed (a bounce counted another way)",
      {
        ...D,
        rules: rulesProbe(COLUMNS, (key, sums) => ({
          ...storedRow(key, sums, !key.dimension.startsWith("event:")),
          bounces: sums.visits - sums.bounces,
        })),
      },
    ],
    [
      "the stored form changed (visitor sets written otherwise)",
      {
        ...D,
        rules: rulesProbe(COLUMNS, (key, sums) => ({
          ...storedRow(key, sums, !key.dimension.startsWith("event:")),
          visitor_set: [...sums.visitorNumbers].join(","),
        })),
      },
    ],
  ];
  it.each(changes)("changes with %s", (_, changed) => {
    expect(rollupFingerprint(changed)).not.toBe(ROLLUP_FINGERPRINT);
  });

  it("tells the changes apart", () => {
    const fingerprints = new Set(changes.map(([, changed]) => rollupFingerprint(changed)));
    expect(fingerprints.size).toBe(changes.length);
  });

  it("probes every kind of group the builder stores", () => {
    const dimensions = new Set(
      (D.rules as { dimension: string }[]).map((g) => g.dimension.replace(/:[^:]*$/, ":")),
    );
    expect(dimensions).toEqual(new Set(["", "visit:", "event:", "event:props:"]));
  });
});

const SITE = "fingerprints";
const NOW = TRAFFIC_TO + 2 * 86_400_000;
const MONTH: Json = ["2026-10-01", "2026-10-31"];
const DAYS: Json = ["2026-10-06", "2026-10-08"];
const QUERIES: Record<string, Json>[] = [
  { ...TRAFFIC_QUERY, date_range: MONTH },
  {
    metrics: ["visits", "pageviews", "visitors"],
    dimensions: ["visit:exit_page"],
    date_range: DAYS,
  },
  {
    metrics: ["pageviews", "events", "revenue", "visitors"],
    dimensions: ["event:page"],
    date_range: MONTH,
  },
  { metrics: ["events", "visitors"], dimensions: ["event:props:plan"], date_range: DAYS },
];

describe.each(SYSTEM_STORAGES)("rollups of other declarations, %s", (storage) => {
  let fresh: FreshDatabase;
  let db: Database;

  beforeAll(async () => {
    fresh = await databaseWithTraffic(storage, {
      siteId: SITE,
      fromMs: TRAFFIC_FROM,
      toMs: TRAFFIC_TO,
      pageViews: 300,
      eventsPerView: 0.3,
      seed: 11,
    });
    db = fresh.db;
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  /** Every query: the engine's answer equals the rows'; the ways it took. */
  const compare = async () => {
    const paths: string[] = [];
    for (const body of QUERIES) {
      const answer = await answersOf(db, SITE, body, "UTC", { totals: true });
      expect(answer.engine, JSON.stringify(body)).toEqual(answer.reference);
      expect(answer.reference.rows.length).toBeGreaterThan(1);
      paths.push(answer.path);
    }
    return paths;
  };
  const periods = async () =>
    (await db.query<{ fingerprint: string | null; n: number }>(
      `select fingerprint, count(*)::int as n from ingest.rollup_periods
        group by fingerprint order by fingerprint`,
    )).map((r) => [r.fingerprint, r.n]);

  it("reads none of them and builds them again", async () => {
    const site = (await rollupSite(db, SITE))!;
    expect(site.fingerprint).toBe(ROLLUP_FINGERPRINT);
    const other = { ...site, fingerprint: "0".repeat(64) };
    const built = (await buildRollups(db, other, NOW)).built;
    expect(built).toBeGreaterThan(30);
    // The other declarations' rollups are current to them (every one: a month and its first
    // day begin together), and to nothing else.
    expect((await buildRollups(db, other, NOW)).built).toBe(0);
    expect(await periods()).toEqual([[other.fingerprint, built]]);
    // A month not built is answered from the visits and rows; a few days as rollups would hold them.
    expect(new Set(await compare())).toEqual(new Set(["visits", "rows", "rollups and rows"]));

    expect((await buildRollups(db, site, NOW)).built).toBe(built);
    expect(await periods()).toEqual([[ROLLUP_FINGERPRINT, built]]);
    expect(new Set(await compare())).toEqual(new Set(["rollups"]));
  }, 300_000);

  it(
    "answers a day of another fingerprint from the rows, and the builder builds that day",
    async () => {
      // A period built before periods had a fingerprint has none.
      await db.query(
        `update ingest.rollup_periods set fingerprint = null
        where site_id = $1 and period_start = '2026-10-07T00:00:00Z'
          and period_end = '2026-10-08T00:00:00Z'`,
        [SITE],
      );
      const paths = await compare();
      expect(paths[0]).toBe("rollups and rows");
      expect(paths[1]).toBe("rollups and rows");
      expect(paths[3]).toBe("rollups and rows");
      // The month holding it is a period of its own, still current: the month by no time reads it.
      expect(paths[2]).toBe("rollups");
      const site = (await rollupSite(db, SITE))!;
      expect((await buildRollups(db, site, NOW)).built).toBe(1);
      expect(new Set(await compare())).toEqual(new Set(["rollups"]));
    },
    300_000,
  );
});
