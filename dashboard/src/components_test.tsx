/**
 * The presentational components rendered to HTML without a browser: what a
 * list and the cards show, and that values from the internet stay text.
 */
import { describe, expect, it } from "vitest";
import { render } from "preact-render-to-string";
import { Cards } from "./cards.tsx";
import { changeColumn, TopList } from "./toplist.tsx";
import { FilterChips } from "./chips.tsx";

const EVIL = `<img src=x onerror="alert(1)">`;

describe("components", () => {
  it("lists rows with bars, escapes every value, and leaves a row without a value plain", () => {
    const html = render(
      <TopList
        dimension="event:page"
        name="Page"
        none="(none)"
        rows={[
          { dimensions: [EVIL], metrics: [10], comparison: null },
          {
            dimensions: ["/b"],
            metrics: [5],
            comparison: { dimensions: ["/b"], metrics: [4], change: [25] },
          },
          { dimensions: [null], metrics: [1] },
        ]}
        columns={[
          { label: "Visitors", text: (row) => String(row.metrics[0]) },
          changeColumn("visitors", 0),
        ]}
        onPick={() => {}}
      />,
    );
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;>");
    expect(html).toContain("--bar-width:100%");
    expect(html).toContain("--bar-width:50%");
    expect(html.match(/<button/g)).toHaveLength(2); // the null row is not a filter
    expect(html).toContain("↑ 25%");
    expect(html).toContain('class="change good"');
    expect(html).toContain("(none)");
  });

  it("shows each card's value and change, good or bad by the metric, revenue per currency", () => {
    const html = render(
      <Cards
        metrics={["visitors", "bounce_rate", "revenue"]}
        row={{
          dimensions: [],
          metrics: [120, 40.5, { EUR: 2598 }],
          comparison: {
            dimensions: [],
            metrics: [100, 38.4, { EUR: 1299, USD: 500 }],
            change: [20, 2.1, { EUR: 100, USD: -100 }],
          },
        }}
        compared="previous period"
        selected="visitors"
        onSelect={() => {}}
      />,
    );
    expect(html).toContain("120");
    expect(html).toContain("↑ 20%");
    expect(html).toMatch(/class="change bad"[^>]*>↑ 2.1 pp/); // a higher bounce rate is bad news
    expect(html).toContain("25.98 EUR");
    expect(html).toContain("0.00 USD");
    expect(html).toContain("↓ 100%");
    expect(html).toContain('aria-pressed="true"');
    expect(html).not.toMatch(/<button[^>]*>\s*<span class="label">Revenue/); // not drawn on the chart
  });

  it("shows no change without a comparison", () => {
    const html = render(
      <Cards
        metrics={["visitors"]}
        row={{ dimensions: [], metrics: [7] }}
        selected="visitors"
        onSelect={() => {}}
      />,
    );
    expect(html).toContain(">7<");
    expect(html).not.toContain("change");
  });

  it("says each filter in words, with a button to remove it", () => {
    const html = render(
      <FilterChips
        filters={[["is", "visit:country", ["DE"]], ["contains_not", "event:page", [EVIL]]]}
        onRemove={() => {}}
      />,
    );
    expect(html).toContain("Country is Germany");
    expect(html).toContain("Page does not contain &lt;img");
    expect(html).not.toContain("<img");
    expect(html).toContain('aria-label="Remove filter: Country is Germany"');
  });
});
