/**
 * The fingerprint of what a rollup holds: a SHA-256 of the declarations
 * that decide it, in canonical JSON (RFC 8785), so the same declarations
 * give the same fingerprint on every run and machine and any change to one
 * gives another. Each rollup period is stored with the fingerprint it was
 * built with (ingest.rollup_periods.fingerprint); a period of another
 * fingerprint is not current, so queries work its days out from the rows
 * and the builder builds it again (rollups.ts).
 *
 * The declarations: the visit attributes (dimensions.ts: each dimension,
 * column and the SQL that reads it), the rollups' other dimensions, the
 * sums a group stores, the statements that read a period's records and
 * number its visitors, and what the rules of rollup_sums.ts and the stored
 * form of a group (visitor sets included) make of a fixed set of records
 * that meets each rule, so a change of a rule changes the fingerprint too.
 */
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";
import { KIND, type VisitAttribute } from "./dimensions.ts";
import {
  type RollupKey,
  rollupOf,
  type RowRecord,
  type Sums,
  type VisitRecord,
} from "./rollup_sums.ts";

export interface RollupDeclarations {
  attributes: readonly VisitAttribute[];
  /** The dimension of all rows and visits, of pages, and the prefix of event properties. */
  dimensions: { all: string; page: string; props: string };
  /** The columns a stored group has (ingest.rollups), key and sums. */
  sums: readonly string[];
  /** The statements that read a period's visits and rows and number its visitors. */
  statements: Readonly<Record<string, string>>;
  /** What the rules and the stored form make of the fixed records (rulesProbe). */
  rules: unknown;
}

/** The fingerprint of `declarations`: SHA-256 of their canonical JSON, in hex. */
export function rollupFingerprint(declarations: RollupDeclarations): string {
  const text = canonicalize(declarations);
  if (text === undefined) throw new Error("the rollup declarations are not JSON");
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Records that meet each rule of rollup_sums.ts: a bouncing visit and a
 * longer one, a visit without attribute values; page views, events with and
 * without names, values, currencies and parameters of each JSON type, a
 * lead, a visitor without a number yet.
 */
function probeRecords(columns: readonly string[]): { visits: VisitRecord[]; rows: RowRecord[] } {
  const valued = Object.fromEntries(columns.map((c, i) => [c, `${c}-${i % 3}`]));
  const unknown = Object.fromEntries(columns.map((c) => [c, null]));
  const row = (fields: Partial<RowRecord>): RowRecord => ({
    kind: KIND.pageview,
    name: null,
    page: "/",
    props: null,
    value: null,
    currency: null,
    visitorNumber: 1,
    visitorKey: "v1",
    attributes: valued,
    ...fields,
  });
  return {
    visits: [
      { attributes: valued, pageviews: 1, events: 0, durationMs: 0 },
      { attributes: valued, pageviews: 3, events: 2, durationMs: 61_500 },
      { attributes: unknown, pageviews: 0, events: 1, durationMs: 0 },
    ],
    rows: [
      row({}),
      row({ page: "/a", visitorNumber: 2, visitorKey: "v2" }),
      row({ page: "/a", visitorNumber: 300, visitorKey: "v300", attributes: unknown }),
      row({
        kind: KIND.event,
        name: "purchase",
        page: "/a",
        props: { k: "pro", n: 2.5, b: true, o: { x: [1] } },
        value: 1250,
        currency: "EUR",
      }),
      row({ kind: KIND.event, name: "purchase", value: 99, currency: "USD", props: { k: null } }),
      row({ kind: KIND.event, name: "signup", value: 5, currency: null }),
      row({ kind: KIND.event, name: null, page: null, visitorNumber: null, visitorKey: "s9" }),
      row({ kind: KIND.lead, page: null, visitorNumber: -7, visitorKey: "r7" }),
    ],
  };
}

/**
 * What the rules of rollup_sums.ts and `stored` (a group as ingest.rollups
 * stores it) make of the probe's records, every group in order.
 */
export function rulesProbe(
  columns: readonly string[],
  stored: (key: RollupKey, sums: Sums) => Record<string, unknown>,
): unknown {
  const { visits, rows } = probeRecords(columns);
  const wanted = { all: true, attributes: columns, page: true, props: ["k", "n", "b", "o", "x"] };
  return [...rollupOf(visits, rows, wanted).values()].map(({ key, sums }) => stored(key, sums));
}
