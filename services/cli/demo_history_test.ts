import { describe, expect, it } from "vitest";
import type { IngestItemInit } from "../gateway/marketing_api.ts";
import { demoHistory, demoToday } from "./demo_history.ts";

/** How many items of each kind: page views, leads, and each custom event by name. */
function kindsOf(items: IngestItemInit[]): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const item of items) {
    const value = item.body?.case === "event" ? item.body.value.name?.value : undefined;
    const name = item.body?.case === "event"
      ? (value?.case === "text" ? value.value : "?")
      : item.body?.case ?? "none";
    kinds.set(name, (kinds.get(name) ?? 0) + 1);
  }
  return kinds;
}

describe("demo history", () => {
  const now = Date.UTC(2026, 10, 23, 12);
  const items = demoHistory("demo", now);

  it("covers the four weeks before today, with times in the past", () => {
    const times = items.map((item) => Number(item.receivedAtMs));
    expect(Math.max(...times)).toBeLessThan(Date.UTC(2026, 10, 23));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(Date.UTC(2026, 9, 26));
    expect(items.every((item) => item.siteId === "demo")).toBe(true);
  });

  it("holds page views, both custom events and leads, in believable amounts", () => {
    const kinds = kindsOf(items);
    expect(kinds.get("pageView")).toBeGreaterThan(1000);
    expect(kinds.get("purchase")).toBeGreaterThan(10);
    expect(kinds.get("newsletter_signup")).toBeGreaterThan(10);
    expect(kinds.get("lead")).toBeGreaterThan(10);
    expect([...kinds.keys()].sort()).toEqual(["lead", "newsletter_signup", "pageView", "purchase"]);
  });

  it("comes from screens of every class, phones to wide desktops", () => {
    const widths = new Set<number>();
    for (const item of items) {
      if (item.body?.case !== "pageView") continue;
      const width = item.body.value.screenWidth;
      if (width !== undefined) widths.add(width);
    }
    const classes = new Set(
      [...widths].map((w) =>
        w < 576 ? "mobile" : w < 992 ? "tablet" : w < 1440 ? "laptop" : "desktop"
      ),
    );
    expect([...classes].sort()).toEqual(["desktop", "laptop", "mobile", "tablet"]);
  });
});

describe("demo traffic of today", () => {
  const now = Date.UTC(2026, 10, 23, 15, 20);
  const items = demoToday("demo", now);
  const times = items.map((item) => Number(item.receivedAtMs));

  it("lies between today's start and now, with visits in the last half hour", () => {
    expect(Math.min(...times)).toBeGreaterThanOrEqual(Date.UTC(2026, 10, 23));
    expect(Math.max(...times)).toBeLessThan(now);
    expect(times.filter((t) => t >= now - 30 * 60_000).length).toBeGreaterThanOrEqual(3);
    expect(kindsOf(items).get("pageView")).toBeGreaterThan(20);
  });

  it("is a few visits at most just after midnight, and never in the future", () => {
    const early = Date.UTC(2026, 10, 23, 0, 10);
    const few = demoToday("demo", early).map((item) => Number(item.receivedAtMs));
    expect(few.every((t) => t < early && t >= early - 30 * 60_000)).toBe(true);
  });
});
