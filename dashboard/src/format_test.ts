import { describe, expect, it } from "vitest";
import { csvOf, formatMetric } from "./format.ts";

describe("dashboard formats", () => {
  it("shows each metric as people read it", () => {
    expect(formatMetric("revenue", { EUR: 2598, USD: 100 })).toBe("25.98 EUR, 1.00 USD");
    expect(formatMetric("revenue", {})).toBe("0");
    expect(formatMetric("bounce_rate", 42.5)).toBe("42.5%");
    expect(formatMetric("visit_duration", 125)).toBe("2:05");
    expect(formatMetric("visitors", 17)).toBe("17");
  });

  it("writes CSV that a spreadsheet reads and never runs", () => {
    expect(csvOf(["page", "views"], [["/a,b", "3"], ['say "hi"', "1"], ["=HYPERLINK(x)", "2"]]))
      .toBe('page,views\r\n"/a,b",3\r\n"say ""hi""",1\r\n\'=HYPERLINK(x),2\r\n');
  });
});
