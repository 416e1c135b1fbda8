import { describe, expect, it } from "vitest";
import {
  bucketsOf,
  compareLabels,
  labelOf,
  localDay,
  offsetText,
  parseDay,
  startOfDay,
} from "./calendar.ts";

const at = (iso: string) => Date.parse(iso);
const zoned = (buckets: ReturnType<typeof bucketsOf>) =>
  buckets.starts.map((s, i) => [new Date(s).toISOString(), buckets.labels[buckets.labelIds[i]]]);

describe("calendar", () => {
  it("reads only real days written YYYY-MM-DD", () => {
    expect(parseDay("2026-02-28")?.toString()).toBe("2026-02-28");
    expect(parseDay("2026-02-29")).toBeUndefined();
    expect(parseDay("2026-2-1")).toBeUndefined();
    expect(parseDay("2026-02-01T00:00")).toBeUndefined();
    expect(parseDay("2024-02-29")?.day).toBe(29);
  });

  it("gives a 23-hour and a 25-hour day around Berlin's daylight-saving changes", () => {
    const zone = "Europe/Berlin";
    const spring = parseDay("2026-03-29")!;
    expect(startOfDay(spring.add({ days: 1 }), zone) - startOfDay(spring, zone)).toBe(23 * 3.6e6);
    const autumn = parseDay("2026-10-25")!;
    expect(startOfDay(autumn.add({ days: 1 }), zone) - startOfDay(autumn, zone)).toBe(25 * 3.6e6);
  });

  it("labels the repeated hour of the autumn change twice, with its offsets", () => {
    const zone = "Europe/Berlin";
    const from = at("2026-10-24T22:00:00Z"); // local midnight, +02:00
    const hours = bucketsOf("hour", zone, from, at("2026-10-25T04:00:00Z"));
    expect(zoned(hours)).toEqual([
      ["2026-10-24T22:00:00.000Z", "2026-10-25T00:00:00+02:00"],
      ["2026-10-24T23:00:00.000Z", "2026-10-25T01:00:00+02:00"],
      ["2026-10-25T00:00:00.000Z", "2026-10-25T02:00:00+02:00"],
      ["2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00+01:00"],
      ["2026-10-25T02:00:00.000Z", "2026-10-25T03:00:00+01:00"],
      ["2026-10-25T03:00:00.000Z", "2026-10-25T04:00:00+01:00"],
    ]);
    expect(labelOf("hour", zone, at("2026-10-25T01:30:00Z"))).toBe("2026-10-25T02:00:00+01:00");
    expect(compareLabels("hour", "2026-10-25T02:00:00+01:00", "2026-10-25T02:00:00+02:00"))
      .toBe(1);
  });

  it("skips the missing hour of the spring change", () => {
    const hours = bucketsOf(
      "hour",
      "Europe/Berlin",
      at("2026-03-29T00:00:00Z"),
      at("2026-03-29T02:00:00Z"),
    );
    expect(zoned(hours).map(([, label]) => label)).toEqual([
      "2026-03-29T01:00:00+01:00",
      "2026-03-29T03:00:00+02:00",
    ]);
  });

  it("starts local hours at a quarter past in a +05:45 zone and days at 18:15 UTC", () => {
    const zone = "Asia/Kathmandu";
    expect(labelOf("hour", zone, at("2026-06-01T04:14:59Z"))).toBe("2026-06-01T09:00:00+05:45");
    expect(labelOf("hour", zone, at("2026-06-01T04:15:00Z"))).toBe("2026-06-01T10:00:00+05:45");
    expect(startOfDay(parseDay("2026-06-02")!, zone)).toBe(at("2026-06-01T18:15:00Z"));
    expect(localDay(at("2026-06-01T18:14:59Z"), zone).toString()).toBe("2026-06-01");
    expect(offsetText(-9.5 * 3.6e6)).toBe("-09:30");
  });

  it("makes a half-hour shift (Lord Howe Island) a bucket of its own", () => {
    const zone = "Australia/Lord_Howe";
    // 2026-04-05 02:00 +11:00 the clocks go back to 01:30 +10:30.
    const hours = bucketsOf("hour", zone, at("2026-04-04T14:00:00Z"), at("2026-04-04T16:00:00Z"));
    expect(zoned(hours)).toEqual([
      ["2026-04-04T14:00:00.000Z", "2026-04-05T01:00:00+11:00"],
      ["2026-04-04T15:00:00.000Z", "2026-04-05T01:00:00+10:30"],
      ["2026-04-04T15:30:00.000Z", "2026-04-05T02:00:00+10:30"],
    ]);
  });

  it("weeks start on Monday and months on the 1st, local", () => {
    const zone = "America/Los_Angeles";
    const from = startOfDay(parseDay("2026-02-26")!, zone);
    const to = startOfDay(parseDay("2026-03-10")!, zone);
    expect(bucketsOf("week", zone, from, to).labels).toEqual([
      "2026-02-23",
      "2026-03-02",
      "2026-03-09",
    ]);
    const months = bucketsOf("month", zone, from, to);
    expect(zoned(months)).toEqual([
      ["2026-02-26T08:00:00.000Z", "2026-02"],
      ["2026-03-01T08:00:00.000Z", "2026-03"],
    ]);
    const days = bucketsOf("day", zone, from, to);
    expect(days.labels).toHaveLength(12);
    // 2026-03-08 is 23 hours long in Los Angeles.
    const i = days.labels.indexOf("2026-03-08");
    expect(days.starts[i + 1] - days.starts[i]).toBe(23 * 3.6e6);
  });
});
