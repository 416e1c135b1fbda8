/// <reference lib="dom" />
/**
 * The reports page in Chromium, on the system as `deno task start` starts it
 * on empty storage (in this process): the demo site and its weeks of
 * history, plus a few rows of this minute (one with HTML in its campaign
 * name). Every number the page shows (cards and their changes, the chart's
 * table, every panel's tabs, full lists, filters, comparisons, the live view
 * and the funnel) is compared with what the API answers to the same question,
 * asked here; never with numbers written in the test. It is also driven by
 * keyboard, checked with axe-core on every view at 1440 and 360 px, and
 * watched for requests to other hosts and CSP violations. That `deno task
 * start` announces the dashboard with the key is test/commands_test.ts's.
 *
 * With UPDATE_SCREENSHOTS=1 it writes docs/images/dashboard.png (1440 px,
 * filters and comparison on) and docs/images/dashboard-phone.png (390 px).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, BROWSER_TESTS, launchBrowser, type Page } from "./helpers/browser.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { storeRows } from "./helpers/stats.ts";
import { card, listRows, seriousViolations, settled, signIn } from "./helpers/dashboard.ts";
import { demoKeys } from "../services/cli/system.ts";
import { formatChange, formatMetric } from "../dashboard/src/format.ts";
import { REFRESH_MS } from "../dashboard/src/store.ts";

const UPDATE = Deno.env.get("UPDATE_SCREENSHOTS") === "1";
const SHOTS = UPDATE
  ? new URL("../docs/images/", import.meta.url).pathname
  : `${Deno.makeTempDirSync({ prefix: "crm-screenshot-" })}/`;

/** HTML in a campaign name: it must be shown as text. */
const EVIL = `<img src=x onerror="document.title='owned'">`;

// deno-lint-ignore no-explicit-any
type Json = any;
type Filter = [string, string, string[]];
interface Asked {
  date_range: string | string[];
  filters?: Filter[];
  compare?: string | string[];
}

/** The cards of the demo site: it declares event types, one bringing revenue. */
const CARDS = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
  "events",
  "revenue",
  "leads",
];

/** Each panel's tabs as this test knows them: id, dimension, and whether rows without a value are listed. */
const TABS: Record<string, [string, string, boolean][]> = {
  sources: [
    ["channel", "visit:channel", true],
    ["source", "visit:source", true],
    ["referrer", "visit:referrer", false],
    ["utm_source", "visit:utm_source", false],
    ["utm_medium", "visit:utm_medium", false],
    ["utm_campaign", "visit:utm_campaign", false],
    ["utm_term", "visit:utm_term", false],
    ["utm_content", "visit:utm_content", false],
  ],
  pages: [
    ["top", "event:page", false],
    ["entry_page", "visit:entry_page", true],
    ["exit_page", "visit:exit_page", true],
  ],
  locations: [["country", "visit:country", true]],
  devices: [
    ["device", "visit:device", true],
    ["browser", "visit:browser", true],
    ["os", "visit:os", true],
    ["screen", "visit:screen", true],
  ],
  ads: [["ad_link", "visit:ad_link", false]],
};

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The tone a change must have: a rise is good news, except of the bounce rate. */
function tone(metric: string, change: number | null): string {
  if (change === null || change === 0) return "same";
  return (change > 0) === (metric !== "bounce_rate") ? "good" : "bad";
}

describe.runIf(BROWSER_TESTS)("the dashboard", () => {
  let browser: Browser;
  let system: TestSystem;
  let reportKey: string;
  const elsewhere: string[] = [];
  const violations: string[] = [];

  const post = async (path: string, body: Json) => {
    const answer = await fetch(`${system.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": reportKey },
      body: JSON.stringify(body),
    });
    const json = await answer.json();
    if (answer.status !== 200) throw new Error(`${path}: ${JSON.stringify(json)}`);
    return json;
  };
  const api = (body: Json) => post("/stats/v1/query", body);

  /** A page that records requests to other hosts, CSP reports and script dialogs. */
  const newPage = async (width = 1440, height = 900): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width, height } });
    page.on("request", (request) => {
      const url = request.url();
      if (!url.startsWith(system.url) && !url.startsWith("data:") && !url.startsWith("blob:")) {
        elsewhere.push(url);
      }
    });
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    page.on("dialog", (dialog) => {
      violations.push(`a script opened a dialog: ${dialog.message()}`);
      dialog.dismiss();
    });
    return page;
  };

  const storeNow = (rows: { minutesAgo: number; body: Json }[]) =>
    storeRows(
      system,
      "demo",
      rows.map((r) => ({ at: Date.now() - r.minutesAgo * 60_000, kind: "view", body: r.body })),
    );

  beforeAll(async () => {
    system = await startTestSystem({ demo: true });
    expect(system.system.demoLoaded).toBe(true);
    reportKey = (await demoKeys()).reportKey;
    const campaign = new URLSearchParams({ utm_source: "mail", utm_campaign: EVIL });
    await storeNow([
      {
        minutesAgo: 2,
        body: {
          u: `https://demo.example/coffee?${campaign}`,
          v: "v-evil",
          s: "s-evil",
          t: EVIL,
          sw: 390,
        },
      },
      {
        minutesAgo: 1,
        body: { u: "https://demo.example/about", v: "v-now", s: "s-now", sw: 1920 },
      },
    ]);
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  /** Every card and its change against the API's answer to the same question. */
  async function expectCards(page: Page, asked: Asked) {
    const shown = await page.locator('[data-testid="cards"] [data-metric]').evaluateAll((nodes) =>
      nodes.map((n) => n.getAttribute("data-metric"))
    );
    expect(shown).toEqual(CARDS);
    const answer = await api({
      metrics: CARDS,
      date_range: asked.date_range,
      filters: asked.filters ?? [],
      include: asked.compare ? { compare: asked.compare } : {},
    });
    const row = answer.results[0];
    for (const [i, metric] of CARDS.entries()) {
      const { value, change, tone: tones } = await card(page, metric);
      const comparison = asked.compare ? row.comparison : undefined;
      if (metric === "revenue") {
        const changes = comparison?.change[i] ?? {};
        const currencies = [...new Set([...Object.keys(row.metrics[i]), ...Object.keys(changes)])]
          .sort();
        expect(value, metric).toEqual(
          currencies.length
            ? currencies.map((c) => formatMetric("revenue", { [c]: row.metrics[i][c] ?? 0 }))
            : ["0"],
        );
        expect(change, metric).toEqual(
          comparison ? currencies.map((c) => formatChange("revenue", changes[c] ?? null)) : [],
        );
        continue;
      }
      expect(value, metric).toEqual([formatMetric(metric, row.metrics[i])]);
      if (comparison) {
        expect(change, metric).toEqual([formatChange(metric, comparison.change[i])]);
        expect(tones, metric).toEqual([tone(metric, comparison.change[i])]);
      } else {
        expect(change, metric).toEqual([]);
      }
    }
    return answer;
  }

  /** The chart's table: every bucket of the range, and the compared range's, as the API has them. */
  async function expectChart(page: Page, asked: Asked & { metric: string; interval: string }) {
    const body = {
      metrics: [asked.metric],
      date_range: asked.date_range,
      filters: asked.filters ?? [],
      dimensions: [`time:${asked.interval}`],
    };
    const now = await api({
      ...body,
      include: { time_labels: true, ...(asked.compare ? { compare: asked.compare } : {}) },
    });
    const labels: string[] = now.meta.timeLabels;
    const valueOf = (answer: Json, label: string) =>
      answer.results.find((r: Json) => r.dimensions[0] === label)?.metrics[0] ?? 0;
    const rows = await listRows(page, '[data-testid="chart-table"]');
    expect(rows.map((r) => r.value)).toEqual(labels);
    expect(rows.map((r) => r.cells[0])).toEqual(
      labels.map((l) => formatMetric(asked.metric, valueOf(now, l))),
    );
    if (!asked.compare) {
      expect(rows.every((r) => r.cells.length === 1)).toBe(true);
      return;
    }
    const before = await api({
      ...body,
      date_range: now.meta.compareDateRange,
      include: { time_labels: true },
    });
    const beforeLabels: string[] = before.meta.timeLabels;
    expect(rows.map((r) => r.cells[2])).toEqual(
      labels.map((_, i) =>
        i < beforeLabels.length ? formatMetric(asked.metric, valueOf(before, beforeLabels[i])) : "–"
      ),
    );
    // The API's own matching of each row with its compared bucket agrees with the drawn one.
    for (const row of now.results) {
      if (!row.comparison) continue;
      const i = labels.indexOf(row.dimensions[0]);
      expect(row.comparison.dimensions[0]).toBe(beforeLabels[i]);
      expect(rows[i].cells[2]).toBe(formatMetric(asked.metric, row.comparison.metrics[0]));
    }
  }

  /** A panel's short list against the API: up to 9 rows, by visitors. */
  async function expectList(
    page: Page,
    panel: string,
    dimension: string,
    listsNone: boolean,
    asked: Asked,
  ) {
    const answer = await api({
      metrics: ["visitors"],
      date_range: asked.date_range,
      filters: asked.filters ?? [],
      dimensions: [dimension],
    });
    const expected = answer.results.filter((r: Json) => listsNone || r.dimensions[0] !== null)
      .slice(0, 9);
    const rows = await listRows(page, `[data-panel="${panel}"] [data-testid="toplist"]`);
    expect(rows.map((r) => r.value), dimension).toEqual(
      expected.map((r: Json) => r.dimensions[0] ?? ""),
    );
    expect(rows.map((r) => r.cells[0]), dimension).toEqual(
      expected.map((r: Json) => formatMetric("visitors", r.metrics[0])),
    );
    return expected;
  }

  async function chooseTab(page: Page, panel: string, tab: string) {
    const root = page.locator(`[data-panel="${panel}"]`);
    const button = root.locator(`button[data-tab="${tab}"]`);
    if (await button.count()) await button.click();
    else await root.locator("select[data-tab-group]").selectOption(tab);
    await page.locator(`[data-panel="${panel}"][data-tab="${tab}"]`).waitFor();
    await settled(page);
  }

  it(
    "signs in, keeps the key out of the URL, and shows every card and change as the API does",
    async () => {
      const page = await newPage();
      await signIn(page, system.url, reportKey);
      expect(page.url()).not.toContain(reportKey);
      expect(await page.evaluate(() => sessionStorage.getItem("crm_report_key"))).toBe(reportKey);
      expect(await page.textContent('[data-testid="site"]')).toBe("demo · Europe/Berlin");
      const answer = await expectCards(page, { date_range: "30d", compare: "previous_period" });
      expect(answer.results[0].metrics[0]).toBeGreaterThan(100); // the demo's history is there
      await expectChart(page, {
        date_range: "30d",
        compare: "previous_period",
        metric: "visitors",
        interval: "day",
      });
      expect(await page.locator('[data-testid="chart"] canvas').count()).toBeGreaterThan(0);
      // A card puts its metric on the chart.
      await page.click('[data-metric="bounce_rate"] button');
      await settled(page);
      expect(new URL(page.url()).searchParams.get("metric")).toBe("bounce_rate");
      await expectChart(page, {
        date_range: "30d",
        compare: "previous_period",
        metric: "bounce_rate",
        interval: "day",
      });
      await page.close();
    },
    180_000,
  );

  it(
    "lists every tab of every panel as the API answers it, events with conversion and properties",
    async () => {
      const page = await newPage();
      await signIn(page, system.url, reportKey, "?compare=off");
      const asked = { date_range: "30d" };
      for (const [panel, tabs] of Object.entries(TABS)) {
        for (const [tab, dimension, listsNone] of tabs) {
          if (tabs.length > 1) await chooseTab(page, panel, tab);
          const rows = await expectList(page, panel, dimension, listsNone, asked);
          expect(rows.length, `${panel}/${tab} shows something`).toBeGreaterThan(0);
        }
      }
      // Countries by name, the code kept as the row's value.
      const countries = await listRows(page, '[data-panel="locations"] [data-testid="toplist"]');
      expect(countries.find((r) => r.value === "DE")?.label).toBe("Germany");

      // Events: visitors, counts, each one's conversion rate and revenue per currency.
      const events = await api({
        metrics: ["visitors", "events", "revenue"],
        date_range: "30d",
        dimensions: ["event:name"],
      });
      const named = events.results.filter((r: Json) => r.dimensions[0] !== null);
      const rows = await listRows(page, '[data-panel="events"] [data-testid="toplist"]');
      expect(rows.map((r) => r.value)).toEqual(named.map((r: Json) => r.dimensions[0]));
      for (const [i, event] of named.entries()) {
        const rate = await api({
          metrics: ["conversion_rate"],
          date_range: "30d",
          filters: [["is", "event:name", [event.dimensions[0]]]],
        });
        expect(rows[i].cells).toEqual([
          formatMetric("visitors", event.metrics[0]),
          formatMetric("events", event.metrics[1]),
          formatMetric("conversion_rate", rate.results[0].metrics[0]),
          formatMetric("revenue", event.metrics[2]),
        ]);
      }
      expect(rows.find((r) => r.value === "purchase")?.cells[3]).toMatch(/ EUR$/);

      // Properties: the event's declared parameters, as GET /stats/v1/site declares them.
      const declared = await (await fetch(`${system.url}/stats/v1/site`, {
        headers: { "x-report-key": reportKey },
      })).json();
      const purchase = declared.eventTypes.find((t: Json) => t.name === "purchase");
      await chooseTab(page, "events", "props");
      await page.selectOption('[data-testid="props-event"]', "purchase");
      await settled(page);
      const keys = await page.locator('[data-testid="props-key"] option').evaluateAll((o) =>
        o.map((x) => (x as HTMLOptionElement).value)
      );
      expect(keys).toEqual(purchase.params.map((p: Json) => p.key));
      for (const key of keys) {
        await page.selectOption('[data-testid="props-key"]', key);
        await settled(page);
        const props = await api({
          metrics: ["visitors", "events"],
          date_range: "30d",
          dimensions: [`event:props:${key}`],
          filters: [["is", "event:name", ["purchase"]]],
        });
        const shown = await listRows(page, '[data-panel="events"] [data-testid="toplist"]');
        expect(shown.map((r) => [r.value, ...r.cells]), key).toEqual(
          props.results.slice(0, 9).map((r: Json) => [
            r.dimensions[0] ?? "",
            formatMetric("visitors", r.metrics[0]),
            formatMetric("events", r.metrics[1]),
          ]),
        );
      }
      const url = new URL(page.url()).searchParams;
      expect([url.get("events"), url.get("event"), url.get("property")]).toEqual([
        "props",
        "purchase",
        keys.at(-1),
      ]);
      await page.close();
    },
    300_000,
  );

  it(
    "opens a panel's full list with every metric and change, searches it and downloads it",
    async () => {
      const page = await newPage();
      await signIn(page, system.url, reportKey, "?range=7d&sources=source");
      await page.click('[data-panel="sources"] [data-testid="more"]');
      await page.waitForSelector('[data-testid="more-dialog"] [data-testid="more-list"]');
      await settled(page);
      expect(new URL(page.url()).searchParams.get("more")).toBe("sources");
      const metrics = ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"];
      const expectFull = async (filters: Filter[]) => {
        const answer = await api({
          metrics,
          date_range: "7d",
          dimensions: ["visit:source"],
          filters,
          include: { compare: "previous_period" },
        });
        const rows = await listRows(page, '[data-testid="more-list"]');
        expect(rows.map((r) => r.value)).toEqual(
          answer.results.map((r: Json) => r.dimensions[0] ?? ""),
        );
        expect(rows.map((r) => r.cells)).toEqual(answer.results.map((r: Json) => [
          formatMetric("visitors", r.metrics[0]),
          r.comparison ? formatChange("visitors", r.comparison.change[0]) : "–",
          ...metrics.slice(1).map((m, i) => formatMetric(m, r.metrics[i + 1])),
        ]));
        return rows;
      };
      const all = await expectFull([]);
      expect(all.length).toBeGreaterThan(1);
      await page.fill('[data-testid="more-search"]', "GOO");
      await settled(page);
      const found = await expectFull([["contains", "visit:source", ["GOO"]]]);
      expect(found.length).toBeGreaterThan(0);
      expect(found.length).toBeLessThan(all.length);

      const download = page.waitForEvent("download");
      await page.click('[data-testid="csv"]');
      const csv = await Deno.readTextFile(await (await download).path());
      const lines = csv.split("\r\n").filter(Boolean);
      expect(lines[0]).toBe("Source,Visitors,Change,Visits,Page views,Bounce rate,Visit duration");
      expect(lines).toHaveLength(found.length + 1);

      await page.keyboard.press("Escape");
      await page.waitForSelector('[data-testid="more-dialog"]', { state: "detached" });
      expect(new URL(page.url()).searchParams.get("more")).toBeNull();
      await page.close();
    },
    180_000,
  );

  it(
    "filters the whole page by a clicked row and by the dialog, as removable chips, with the back button",
    async () => {
      const page = await newPage();
      await signIn(page, system.url, reportKey, "?range=7d");
      const channels = await expectList(page, "sources", "visit:channel", true, {
        date_range: "7d",
      });
      const channel = channels[0].dimensions[0];
      await page.click(`[data-panel="sources"] tr[data-value="${channel}"] button`);
      await settled(page);
      const byChannel: Filter = ["is", "visit:channel", [channel]];
      expect(await page.locator('[data-testid="filter"]').allTextContents()).toEqual([
        `Channel is ${channel}×`,
      ]);
      expect(new URL(page.url()).searchParams.getAll("f")).toEqual([`is,visit:channel,${channel}`]);
      await expectCards(page, {
        date_range: "7d",
        filters: [byChannel],
        compare: "previous_period",
      });
      await expectList(page, "pages", "event:page", false, {
        date_range: "7d",
        filters: [byChannel],
      });

      // is not, from the dialog; both filters hold together.
      const countries = await api({
        metrics: ["visitors"],
        date_range: "7d",
        dimensions: ["visit:country"],
        filters: [byChannel],
      });
      const country = countries.results[0].dimensions[0];
      await page.click('[data-testid="add-filter"]');
      await page.selectOption('[data-testid="filter-dimension"]', "visit:country");
      await page.selectOption('[data-testid="filter-operator"]', "is_not");
      await page.fill('[data-testid="filter-value"]', country);
      await page.click('[data-testid="filter-apply"]');
      await settled(page);
      const notCountry: Filter = ["is_not", "visit:country", [country]];
      expect(await page.locator('[data-testid="filter"]').count()).toBe(2);
      await expectCards(page, {
        date_range: "7d",
        filters: [byChannel, notCountry],
        compare: "previous_period",
      });
      await expectChart(page, {
        date_range: "7d",
        filters: [byChannel, notCountry],
        compare: "previous_period",
        metric: "visitors",
        interval: "day",
      });

      // contains, on a page.
      await page.click('[data-testid="add-filter"]');
      await page.selectOption('[data-testid="filter-dimension"]', "event:page");
      await page.selectOption('[data-testid="filter-operator"]', "contains");
      await page.fill('[data-testid="filter-value"]', "coffee");
      await page.click('[data-testid="filter-apply"]');
      await settled(page);
      const onCoffee: Filter = ["contains", "event:page", ["coffee"]];
      await expectCards(page, {
        date_range: "7d",
        filters: [byChannel, notCountry, onCoffee],
        compare: "previous_period",
      });

      // Removing the first chip keeps the others.
      await page.click('[data-testid="filter"]:first-child button');
      await settled(page);
      await expectCards(page, {
        date_range: "7d",
        filters: [notCountry, onCoffee],
        compare: "previous_period",
      });
      // The back button brings the filter back.
      await page.goBack();
      await settled(page);
      expect(await page.locator('[data-testid="filter"]').count()).toBe(3);
      await expectCards(page, {
        date_range: "7d",
        filters: [byChannel, notCountry, onCoffee],
        compare: "previous_period",
      });

      // The link opens the same view for anyone signed in with a key of the site.
      const link = page.url();
      const other = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await other.goto(link);
      await other.fill("#key", reportKey);
      await other.click("#signin-form button[type=submit]");
      await other.waitForSelector('[data-testid="cards"]');
      await settled(other);
      expect(other.url()).toBe(link);
      expect(await other.locator('[data-testid="filter"]').allTextContents()).toEqual(
        await page.locator('[data-testid="filter"]').allTextContents(),
      );
      await expectCards(other, {
        date_range: "7d",
        filters: [byChannel, notCountry, onCoffee],
        compare: "previous_period",
      });
      await other.close();
      await page.close();
    },
    240_000,
  );

  it("switches the comparison, the range (presets and custom days) and the interval", async () => {
    const page = await newPage();
    await signIn(page, system.url, reportKey, "?range=7d");
    await page.selectOption('[data-testid="compare"]', "year_over_year");
    await settled(page);
    await expectCards(page, { date_range: "7d", compare: "year_over_year" });
    await page.selectOption('[data-testid="compare"]', "off");
    await settled(page);
    await expectCards(page, { date_range: "7d" });
    await expectChart(page, { date_range: "7d", metric: "visitors", interval: "day" });

    // Custom compared days.
    const week = (await api({ metrics: ["visitors"], date_range: "7d" })).meta.dateRange;
    const earlier = (await api({ metrics: ["visitors"], date_range: "30d" })).meta.dateRange;
    await page.selectOption('[data-testid="compare"]', "custom");
    const compareForm = page.locator('form[aria-label="Compared days"]');
    await compareForm.locator("input").nth(0).fill(earlier[0]);
    const compared = [earlier[0], addDays(earlier[0], 6)];
    await compareForm.locator("input").nth(1).fill(compared[1]);
    await compareForm.locator("button[type=submit]").click();
    await settled(page);
    await expectCards(page, { date_range: "7d", compare: compared });
    await expectChart(page, {
      date_range: "7d",
      compare: compared,
      metric: "visitors",
      interval: "day",
    });

    // Hours in a week.
    await page.click('[data-testid="chart"] button:has-text("Hours")');
    await settled(page);
    expect(new URL(page.url()).searchParams.get("interval")).toBe("hour");
    await expectChart(page, {
      date_range: "7d",
      compare: compared,
      metric: "visitors",
      interval: "hour",
    });

    // A custom range of days.
    await page.selectOption('[data-testid="range"]', "custom");
    const rangeForm = page.locator('form[aria-label="Custom date range"]');
    await rangeForm.locator("input").nth(0).fill(earlier[0]);
    await rangeForm.locator("input").nth(1).fill(week[0]);
    await rangeForm.locator("button[type=submit]").click();
    await settled(page);
    expect(new URL(page.url()).searchParams.get("range")).toBe(`${earlier[0]}..${week[0]}`);
    await expectCards(page, { date_range: [earlier[0], week[0]], compare: compared });

    // Presets: yesterday by hour; all time compares nothing.
    await page.selectOption('[data-testid="range"]', "yesterday");
    await settled(page);
    await expectCards(page, { date_range: "yesterday", compare: compared });
    await expectChart(page, {
      date_range: "yesterday",
      compare: compared,
      metric: "visitors",
      interval: "hour",
    });
    await page.selectOption('[data-testid="range"]', "all");
    await settled(page);
    expect(await page.isDisabled('[data-testid="compare"]')).toBe(true);
    await expectCards(page, { date_range: "all" });
    await page.close();
  }, 240_000);

  it(
    "shows current visitors and the live view, refreshed without reloading, and not while hidden",
    async () => {
      const page = await newPage();
      // The page's clock flows, and the test moves it on past a refresh instead of waiting.
      await page.clock.install();
      let asked = 0;
      page.on("request", (r) => {
        if (r.url().includes("/stats/v1/")) asked++;
      });
      await signIn(page, system.url, reportKey);
      const current = async () =>
        (await api({ metrics: ["visitors"], date_range: "5m" })).results[0].metrics[0];
      const shown = async () =>
        (await page.textContent('[data-testid="current-visitors"] strong'))?.trim();
      expect(await shown()).toBe(formatMetric("visitors", await current()));

      await page.click('[data-testid="current-visitors"]');
      await page.waitForSelector('[data-testid="live"]');
      await settled(page);
      expect(new URL(page.url()).searchParams.get("range")).toBe("realtime");
      await expectCards(page, { date_range: "30m", compare: "previous_period" });
      await expectChart(page, {
        date_range: "30m",
        metric: "visitors",
        interval: "minute",
      });
      await expectList(page, "pages", "event:page", false, { date_range: "30m" });
      await chooseTab(page, "sources", "source");
      await expectList(page, "sources", "visit:source", true, { date_range: "30m" });

      // A visitor arrives: the page shows it at the next refresh, without reloading.
      await page.evaluate(() => ((globalThis as Json).sameDocument = true));
      const before = await current();
      await storeNow([{
        minutesAgo: 0,
        body: { u: "https://demo.example/blog", v: "v-live", s: "s-live" },
      }]);
      expect(await current()).toBe(before + 1);
      await page.clock.runFor(REFRESH_MS);
      await expect.poll(shown, { timeout: 30_000, interval: 250 }).toBe(
        formatMetric("visitors", before + 1),
      );
      await settled(page);
      await expectList(page, "pages", "event:page", false, { date_range: "30m" });
      expect(await page.evaluate(() => (globalThis as Json).sameDocument)).toBe(true);

      // Hidden, the tab asks nothing; shown again, it refreshes at once.
      await page.evaluate(() => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
        Object.defineProperty(document, "visibilityState", {
          configurable: true,
          get: () => "hidden",
        });
        document.dispatchEvent(new Event("visibilitychange"));
      });
      const whileHidden = asked;
      await page.clock.runFor(REFRESH_MS + 2_000);
      // A refresh would have made the page busy and asked; settled waits for it to be quiet.
      await settled(page);
      expect(asked).toBe(whileHidden);
      await page.evaluate(() => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => false });
        Object.defineProperty(document, "visibilityState", {
          configurable: true,
          get: () => "visible",
        });
        document.dispatchEvent(new Event("visibilitychange"));
      });
      await expect.poll(() => asked, { timeout: 5_000 }).toBeGreaterThan(whileHidden);
      await page.close();
    },
    180_000,
  );

  it("builds a funnel of steps in the page and shows each step as the API counts it", async () => {
    const page = await newPage();
    await signIn(page, system.url, reportKey);
    const steps = page.locator('[data-testid="step-edit"]');
    await steps.nth(0).locator("input").fill("/coffee*");
    await steps.nth(1).locator("select").first().selectOption("event");
    await steps.nth(1).locator("select").nth(1).selectOption("purchase");
    await page.click('[data-testid="funnel"] button:has-text("+ Step")');
    await steps.nth(2).locator("select").first().selectOption("lead");
    await page.click('[data-testid="funnel-show"]');
    await page.waitForSelector('[data-testid="funnel-result"]');
    await settled(page);
    expect(new URL(page.url()).searchParams.getAll("step")).toEqual([
      "page:/coffee*",
      "event:purchase",
      "lead",
    ]);
    const expectFunnel = async (filters: Filter[]) => {
      const answer = await post("/stats/v1/funnel", {
        date_range: "30d",
        filters,
        steps: [{ page: "/coffee*" }, { event: "purchase" }, { lead: true }],
      });
      const shown = await page.locator('[data-testid="funnel-result"] li').evaluateAll((items) =>
        items.map((li) => [
          li.querySelector('[data-testid="funnel-visitors"]')?.textContent,
          li.querySelector('[data-testid="funnel-conversion"]')?.textContent,
          li.querySelector('[data-testid="funnel-dropoff"]')?.textContent ?? null,
        ])
      );
      expect(shown).toEqual(answer.steps.map((s: Json, i: number) => [
        formatMetric("visitors", s.visitors),
        `${s.conversionRate.toFixed(1)}%`,
        i === 0 ? null : formatMetric("visitors", s.dropOff),
      ]));
      expect(answer.steps[0].visitors).toBeGreaterThan(0);
    };
    await expectFunnel([]);
    // Visit filters narrow the funnel; page and event filters are not the funnel's.
    await page.goto(
      `${page.url()}&f=is,visit:device,desktop&f=contains,event:page,blog`,
    );
    await page.waitForSelector('[data-testid="funnel-result"]');
    await settled(page);
    await expectFunnel([["is", "visit:device", ["desktop"]]]);
    expect(await page.textContent('[data-testid="funnel"]')).toContain("do not apply to a funnel");
    await page.close();
  }, 180_000);

  it("is used by keyboard alone", async () => {
    const page = await newPage();
    await page.goto(`${system.url}/dashboard/?range=7d`);
    await page.keyboard.press("Tab");
    await page.keyboard.type(reportKey);
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="cards"]');
    await settled(page);
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return e
          ? `${e.tagName} ${
            e.closest("[data-panel]")?.getAttribute("data-panel") ?? ""
          } ${e.className} ${e.textContent?.trim()}`
          : "";
      });
    const tabUntil = async (test: (text: string) => boolean, key = "Tab") => {
      for (let i = 0; i < 120; i++) {
        await page.keyboard.press(key);
        if (test(await focused())) return;
      }
      throw new Error(`never reached by ${key}`);
    };
    // A row of the Sources panel, then Enter: a filter.
    await tabUntil((t) => /^BUTTON sources name/.test(t));
    const row = (await focused()).replace(/^BUTTON sources name /, "");
    await page.keyboard.press("Enter");
    await settled(page);
    expect(await page.locator('[data-testid="filter"]').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("f")).toContain(row);
    // Back up to the chip's remove button; Enter removes it.
    await tabUntil((t) => t.startsWith("BUTTON  remove"), "Shift+Tab");
    await page.keyboard.press("Enter");
    await settled(page);
    expect(await page.locator('[data-testid="filter"]').count()).toBe(0);
    // Pages' "More": a dialog that Escape closes.
    await tabUntil((t) => /^BUTTON pages more/.test(t));
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="more-dialog"] [data-testid="more-list"]');
    expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(
      true,
    );
    await page.keyboard.press("Escape");
    await page.waitForSelector('[data-testid="more-dialog"]', { state: "detached" });
    // The range by keyboard.
    await page.focus('[data-testid="range"]');
    await page.keyboard.press("ArrowDown");
    await settled(page);
    // The next preset, the default one, which the URL leaves out.
    expect(await page.inputValue('[data-testid="range"]')).toBe("30d");
    expect(new URL(page.url()).searchParams.get("range")).toBeNull();
    await expectCards(page, { date_range: "30d", compare: "previous_period" });
    await page.close();
  }, 180_000);

  it(
    "has no serious or critical axe-core violations on any view, and fits 1440, 390 and 360 px",
    async () => {
      const page = await newPage();
      await page.goto(`${system.url}/dashboard/`);
      expect(await seriousViolations(page), "sign-in").toEqual([]);
      const view =
        "?range=7d&f=is,visit:device,desktop&f=is_not,visit:country,US&step=page:/*&step=page:/contact&step=lead";
      await signIn(page, system.url, reportKey, view);
      await page.waitForSelector('[data-testid="funnel-result"]');
      expect(await seriousViolations(page), "overview with filters, comparison and funnel").toEqual(
        [],
      );
      await page.screenshot({ path: `${SHOTS}dashboard.png`, fullPage: true });
      await page.click('[data-testid="chart"] summary');
      expect(await seriousViolations(page), "chart table").toEqual([]);
      await chooseTab(page, "events", "props");
      await page.selectOption('[data-testid="props-event"]', "purchase");
      await settled(page);
      expect(await seriousViolations(page), "event properties").toEqual([]);
      await page.click('[data-panel="pages"] [data-testid="more"]');
      await page.waitForSelector('[data-testid="more-list"]');
      await settled(page);
      expect(await seriousViolations(page), "full list").toEqual([]);
      await page.keyboard.press("Escape");
      await page.click('[data-testid="add-filter"]');
      await page.waitForSelector('[data-testid="filter-dialog"]');
      expect(await seriousViolations(page), "filter dialog").toEqual([]);
      await page.keyboard.press("Escape");
      await page.selectOption('[data-testid="range"]', "realtime");
      await page.waitForSelector('[data-testid="live"]');
      await settled(page);
      expect(await seriousViolations(page), "live view").toEqual([]);
      await page.close();

      for (const width of [390, 360]) {
        const phone = await newPage(width, 844);
        await signIn(phone, system.url, reportKey, view);
        await phone.waitForSelector('[data-testid="funnel-result"]');
        const overflow = await phone.evaluate(() =>
          document.documentElement.scrollWidth - document.documentElement.clientWidth
        );
        expect(overflow, `${width} px wide`).toBeLessThanOrEqual(0);
        expect(await seriousViolations(phone), `${width} px`).toEqual([]);
        if (width === 390) {
          await phone.screenshot({ path: `${SHOTS}dashboard-phone.png`, fullPage: true });
        }
        await phone.close();
      }
      const png = await Deno.readFile(`${SHOTS}dashboard.png`);
      expect([...png.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]); // "PNG"
    },
    300_000,
  );

  it("shows data from the internet as text, never as HTML", async () => {
    const page = await newPage();
    await signIn(page, system.url, reportKey, "?sources=utm_campaign&compare=off");
    const rows = await listRows(page, '[data-panel="sources"] [data-testid="toplist"]');
    const evil = rows.find((r) => r.value === EVIL);
    expect(evil?.label).toBe(EVIL);
    expect(await page.locator("#app img").count()).toBe(0);
    // Filtering by it puts it in a chip, as text too.
    await page.locator('[data-panel="sources"] [data-testid="toplist"] tbody tr')
      .nth(rows.indexOf(evil!)).locator("button").click();
    await settled(page);
    expect(await page.locator('[data-testid="filter"]').allTextContents()).toEqual([
      `UTM campaign is ${EVIL}×`,
    ]);
    expect(await page.locator("#app img").count()).toBe(0);
    expect(await page.title()).toBe("Reports");
    await page.close();
  }, 120_000);

  it("refuses a key that is not a report key of a site, and signs out", async () => {
    const page = await newPage();
    await page.goto(`${system.url}/dashboard/`);
    await page.fill("#key", `rk_${"0".repeat(48)}`);
    await page.click("#signin-form button[type=submit]");
    await expect.poll(() => page.textContent("#signin-error")).toContain("not valid");
    expect(await page.locator("#app").count()).toBe(0);
    await page.fill("#key", "not a key");
    await page.click("#signin-form button[type=submit]");
    await expect.poll(() => page.textContent("#signin-error")).toContain("48 hex");
    await signIn(page, system.url, reportKey);
    await page.click('[data-testid="signout"]');
    await page.waitForSelector("#signin");
    expect(await page.evaluate(() => sessionStorage.getItem("crm_report_key"))).toBeNull();
    await page.close();
    expect(elsewhere, "requests to other hosts").toEqual([]);
    expect(violations, "CSP violations and script dialogs").toEqual([]);
  }, 120_000);
});
