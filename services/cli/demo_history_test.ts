import { describe, expect, it } from "vitest";
import { demoHistory } from "./demo_history.ts";

describe("demo history", () => {
  const now = Date.UTC(2026, 10, 23, 12);
  const items = demoHistory("demo", now);

  it("covers the four weeks before today, with times in the past", () => {
    const times = items.map((item) => Number(item.receivedAtMs));
    expect(Math.max(...times)).toBeLessThan(Date.UTC(2026, 10, 23));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(Date.UTC(2026, 9, 26));
    expect(items.every((item) => item.siteId === "demo")).toBe(true);
  });

  it("holds page views and both custom events, in believable amounts", () => {
    const kinds = new Map<string, number>();
    for (const item of items) {
      const value = item.body?.case === "event" ? item.body.value.name?.value : undefined;
      const name = item.body?.case === "event"
        ? (value?.case === "text" ? value.value : "?")
        : item.body?.case ?? "none";
      kinds.set(name, (kinds.get(name) ?? 0) + 1);
    }
    expect(kinds.get("pageView")).toBeGreaterThan(1000);
    expect(kinds.get("purchase")).toBeGreaterThan(10);
    expect(kinds.get("newsletter_signup")).toBeGreaterThan(10);
    expect([...kinds.keys()].sort()).toEqual(["newsletter_signup", "pageView", "purchase"]);
  });
});
