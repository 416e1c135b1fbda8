import { describe, expect, it } from "vitest";
import {
  changeTone,
  countryName,
  csvOf,
  describeChange,
  formatChange,
  formatDays,
  formatMetric,
  formatTimeLabel,
  valueLabel,
} from "./format.ts";

describe("dashboard formats", () => {
  it("shows each metric as people read it", () => {
    expect(formatMetric("revenue", { EUR: 259800, USD: 100 })).toBe("2,598.00 EUR, 1.00 USD");
    expect(formatMetric("revenue", {})).toBe("0");
    expect(formatMetric("bounce_rate", 42.5)).toBe("42.5%");
    expect(formatMetric("conversion_rate", 3)).toBe("3.0%");
    expect(formatMetric("visit_duration", 125)).toBe("2:05");
    expect(formatMetric("visit_duration", 3725)).toBe("1:02:05");
    expect(formatMetric("visitors", 17)).toBe("17");
    expect(formatMetric("pageviews", 12345)).toBe("12,345");
    expect(formatMetric("views_per_visit", 1.25)).toBe("1.25");
  });

  it("says whether a change is good news: a bounce rate going down is", () => {
    expect(changeTone("visitors", 12.5)).toBe("good");
    expect(changeTone("visitors", -3)).toBe("bad");
    expect(changeTone("bounce_rate", -2.1)).toBe("good");
    expect(changeTone("bounce_rate", 2.1)).toBe("bad");
    expect(changeTone("visit_duration", 10)).toBe("good");
    expect(changeTone("visitors", 0)).toBe("same");
    expect(changeTone("visitors", null)).toBe("same");
  });

  it("writes changes with arrows, points for rates, and words for screen readers", () => {
    expect(formatChange("visitors", 12.5)).toBe("↑ 12.5%");
    expect(formatChange("visitors", -40)).toBe("↓ 40%");
    expect(formatChange("bounce_rate", -2.1)).toBe("↓ 2.1 pp");
    expect(formatChange("visitors", 0)).toBe("0%");
    expect(formatChange("visitors", null)).toBe("new");
    expect(describeChange("visitors", -40, "10")).toBe("down 40% from 10");
    expect(describeChange("bounce_rate", 2.1, "40.0%")).toBe(
      "up 2.1 percentage points from 40.0%",
    );
  });

  it("reads time labels as they are, without zone arithmetic", () => {
    expect(formatTimeLabel("2026-10-25T02:00:00+01:00")).toBe("02:00");
    expect(formatTimeLabel("2026-10-25T14:05:00+01:00", true)).toBe("25 Oct, 14:05");
    expect(formatTimeLabel("2026-11-21")).toBe("21 Nov");
    expect(formatTimeLabel("2026-11")).toBe("Nov 2026");
    expect(formatDays("2026-11-01", "2026-11-20")).toBe("1 Nov – 20 Nov 2026");
    expect(formatDays("2025-12-20", "2026-01-02")).toBe("20 Dec 2025 – 2 Jan 2026");
    expect(formatDays("2026-11-20", "2026-11-20")).toBe("20 Nov 2026");
  });

  it("names countries and rows without a value", () => {
    expect(countryName("DE")).toBe("Germany");
    expect(valueLabel("visit:country", "NL")).toBe("Netherlands");
    expect(valueLabel("visit:source", null, "Direct / none")).toBe("Direct / none");
    expect(valueLabel("event:page", "<b>/x</b>")).toBe("<b>/x</b>");
  });

  it("writes CSV that a spreadsheet reads and never runs", () => {
    expect(csvOf(["page", "views"], [["/a,b", "3"], ['say "hi"', "1"], ["=HYPERLINK(x)", "2"]]))
      .toBe('page,views\r\n"/a,b",3\r\n"say ""hi""",1\r\n\'=HYPERLINK(x),2\r\n');
  });
});
