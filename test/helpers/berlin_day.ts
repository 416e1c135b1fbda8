/**
 * Rows of a site in Berlin across both daylight-saving changes of 2026, a
 * week that starts in another UTC month and a session across midnight, and
 * the answers every storage and every server zone must give for them.
 */
import { expect } from "vitest";
import type { TestSystem } from "./system.ts";
import { statsRows, type StoredRow } from "./stats.ts";

export const view = (at: string | number, path: string, session?: string): StoredRow => ({
  at,
  kind: "view",
  body: {
    u: `https://site.example${path}`,
    v: session ?? `v${at}`,
    ...(session ? { s: session } : {}),
  },
});

/** A page view every 30 minutes over one local day of Berlin, from its first instant. */
function halfHourly(first: string, next: string): StoredRow[] {
  const rows: StoredRow[] = [];
  for (let at = Date.parse(first); at < Date.parse(next); at += 30 * 60_000) {
    rows.push(view(at, "/"));
  }
  return rows;
}

export const BERLIN_ROWS = [
  // 2026-03-29 has 23 hours in Berlin, 2026-10-25 has 25.
  ...halfHourly("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"),
  ...halfHourly("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"),
  // 00:30 on Sunday 1 March in Berlin, still February in UTC.
  view("2026-02-28T23:30:00Z", "/week"),
  view("2026-03-02T08:00:00Z", "/week"),
  // A session across midnight: 23:50, 00:10 and an event at 00:20 local.
  view("2026-05-10T21:50:00Z", "/late", "sM"),
  view("2026-05-10T22:10:00Z", "/later", "sM"),
  { at: "2026-05-10T22:20:00Z", kind: "event", body: { n: "note", v: "sM", s: "sM" } } as StoredRow,
];

/** The Berlin answers every storage and every server zone must give. */
export async function expectBerlinAnswers(sys: TestSystem | { url: string }) {
  const q = (body: Record<string, unknown>) => statsRows(sys, "berlin", body);
  expect(
    await q({
      metrics: ["pageviews"],
      date_range: ["2026-03-28", "2026-03-30"],
      dimensions: ["time:day"],
    }),
  ).toEqual([["2026-03-29", 46]]);
  expect(
    await q({
      metrics: ["pageviews"],
      date_range: ["2026-10-24", "2026-10-26"],
      dimensions: ["time:day"],
    }),
  ).toEqual([["2026-10-25", 50]]);
  const autumn = await q({
    metrics: ["pageviews"],
    date_range: ["2026-10-25", "2026-10-25"],
    dimensions: ["time:hour"],
  });
  expect(autumn).toHaveLength(25);
  expect(autumn.slice(1, 5)).toEqual([
    ["2026-10-25T01:00:00+02:00", 2],
    ["2026-10-25T02:00:00+02:00", 2],
    ["2026-10-25T02:00:00+01:00", 2],
    ["2026-10-25T03:00:00+01:00", 2],
  ]);
  const spring = await q({
    metrics: ["pageviews"],
    date_range: ["2026-03-29", "2026-03-29"],
    dimensions: ["time:hour"],
  });
  expect(spring.map((r) => r[0])).toEqual([
    "2026-03-29T00:00:00+01:00",
    "2026-03-29T01:00:00+01:00",
    ...Array.from(
      { length: 21 },
      (_, i) => `2026-03-29T${String(i + 3).padStart(2, "0")}:00:00+02:00`,
    ),
  ]);
  expect(
    await q({
      metrics: ["pageviews"],
      date_range: ["2026-02-23", "2026-03-08"],
      dimensions: ["time:week", "time:month"],
    }),
  ).toEqual([["2026-02-23", "2026-03", 1], ["2026-03-02", "2026-03", 1]]);
}
