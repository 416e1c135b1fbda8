import { describe, expect, it } from "vitest";
import { alertMail, changeText, duration, periodText, reportMail } from "./report_mail.ts";

const day = (text: string) => Temporal.PlainDate.from(text);

describe("reportMail", () => {
  const facts = {
    siteName: "Demo <site>",
    every: "week" as const,
    first: day("2026-11-16"),
    last: day("2026-11-22"),
    previousFirst: day("2026-11-09"),
    previousLast: day("2026-11-15"),
    timeZone: "Europe/Berlin",
    dashboardUrl: "https://stats.example/dashboard/",
    numbers: {
      metrics: [
        { metric: "visitors" as const, value: 1234, change: 12.5 },
        { metric: "visits" as const, value: 1500, change: null },
        { metric: "pageviews" as const, value: 4000, change: -3 },
        { metric: "bounce_rate" as const, value: 41.2, change: 2.1 },
        { metric: "visit_duration" as const, value: 125, change: 0 },
      ],
      sources: [{ source: "google.com", visitors: 700 }, { source: null, visitors: 300 }],
      pages: [{ page: "/", pageviews: 2000 }],
    },
  };

  it("names the site and the period, and gives every number with its change in both parts", () => {
    const mail = reportMail(facts);
    expect(mail.subject).toBe("Demo <site>: weekly report, 16–22 Nov 2026");
    expect(mail.text).toMatch(/^Visitors +1,234 +\+12\.5%$/m);
    expect(mail.text).toMatch(/^Visits +1,500 +new$/m);
    expect(mail.text).toMatch(/^Page views +4,000 +−3\.0%$/m);
    expect(mail.text).toMatch(/^Bounce rate +41\.2% +\+2\.1 pp$/m);
    expect(mail.text).toMatch(/^Visit duration +2m 05s +±0\.0%$/m);
    expect(mail.text).toMatch(/^ {2}1\. google\.com +700$/m);
    expect(mail.text).toMatch(/^ {2}2\. Direct \/ none +300$/m);
    expect(mail.text).toContain("Open the dashboard: https://stats.example/dashboard/");
    expect(mail.html).toContain("Demo &lt;site&gt;: weekly report");
    expect(mail.html).not.toContain("<site>");
    expect(mail.html).toContain('href="https://stats.example/dashboard/"');
    expect(mail.html).toContain("1,234");
  });

  it("says so when a period had no visits", () => {
    const empty = { ...facts, numbers: { ...facts.numbers, sources: [], pages: [] } };
    expect(reportMail(empty).text).toContain("No visits in this period");
    expect(reportMail(empty).html).toContain("No data in this period");
  });

  it("keeps the subject on one line whatever the site's name", () => {
    expect(reportMail({ ...facts, siteName: "a\r\nBcc: x@y" }).subject).not.toMatch(/[\r\n]/);
  });
});

describe("formats", () => {
  it("writes periods, durations and changes as people read them", () => {
    expect(periodText("week", day("2026-11-30"), day("2026-12-06"))).toBe("30 Nov – 6 Dec 2026");
    expect(periodText("week", day("2026-12-28"), day("2027-01-03"))).toBe(
      "28 Dec 2026 – 3 Jan 2027",
    );
    expect(periodText("month", day("2026-02-01"), day("2026-02-28"))).toBe("February 2026");
    expect([duration(0), duration(59), duration(61), duration(3725)]).toEqual([
      "0s",
      "59s",
      "1m 01s",
      "1h 02m",
    ]);
    expect(changeText({ metric: "bounce_rate", value: 1, change: -0.5 })).toBe("−0.5 pp");
  });
});

describe("alertMail", () => {
  it("says what fired, the window and the threshold", () => {
    const spike = alertMail({
      siteName: "Demo",
      kind: "spike",
      visitors: 51,
      threshold: 50,
      windowMinutes: 30,
      dashboardUrl: "https://s.example/dashboard/",
    });
    expect(spike.subject).toBe("Demo: traffic spike: 51 visitors in the last 30 minutes");
    expect(spike.text).toContain("reach 50");
    const drop = alertMail({
      siteName: "Demo",
      kind: "drop",
      visitors: 1,
      threshold: 5,
      windowMinutes: 720,
      dashboardUrl: "https://s.example/dashboard/",
    });
    expect(drop.subject).toBe("Demo: traffic drop: 1 visitor in the last 12 hours");
    expect(drop.html).toContain("fewer than 5");
  });
});
