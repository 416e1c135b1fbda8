/**
 * A few weeks of believable history for the demo site, so the dashboard's
 * charts are not empty on first start: visits from search, social, a
 * newsletter, a paid campaign and direct, page views and custom events,
 * written through ingest-service's own write path (the same RPC the gateway
 * calls, so every derived value is kept as for live traffic), with times in
 * the past. Seeded, so every first start tells the same story.
 */
import type { Client } from "@connectrpc/connect";
import { type IngestItemInit } from "../gateway/marketing_api.ts";
import { ingestBodyOf } from "../gateway/ingest_body.ts";
import { type IngestService, Outcome, Source } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import type { JsonObject } from "../lib/json.ts";
import { seededRandom } from "../lib/random.ts";

const DAY_MS = 86_400_000;

const ORIGIN = "https://demo.example";
const PAGES = [
  "/",
  "/coffee",
  "/coffee/ethiopia-guji",
  "/coffee/brazil-cerrado",
  "/blog",
  "/blog/roasting-at-home",
  "/about",
  "/contact",
];
const ARRIVALS: { weight: number; landing: (page: string) => string; referrer?: string }[] = [
  { weight: 34, landing: (p) => p, referrer: "https://www.google.com/" },
  { weight: 22, landing: (p) => p },
  { weight: 12, landing: (p) => p, referrer: "https://www.instagram.com/" },
  { weight: 8, landing: (p) => p, referrer: "https://kaffeeforum.example/thread/42" },
  {
    weight: 10,
    landing: (p) => `${p}?utm_source=newsletter&utm_medium=email&utm_campaign=roast-calendar`,
  },
  {
    weight: 14,
    landing: (p) =>
      `${p}?utm_source=google&utm_medium=cpc&utm_campaign=spring-roasts&dl=spring-ads`,
  },
];
const AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
];
/** Addresses in Germany, Austria, Switzerland, the Netherlands and the US, for the countries. */
const ADDRESSES = [
  "85.214.132.117",
  "85.214.20.141",
  "91.64.12.7",
  "62.178.10.4",
  "81.6.40.9",
  "145.53.2.3",
  "8.8.4.4",
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)];
}

function weighted<T extends { weight: number }>(rand: () => number, items: readonly T[]): T {
  let roll = rand() * items.reduce((sum, item) => sum + item.weight, 0);
  for (const item of items) if ((roll -= item.weight) < 0) return item;
  return items[items.length - 1];
}

/** The history's items: page views and events of `days` days ending yesterday. */
export function demoHistory(siteId: string, now: number, days = 28): IngestItemInit[] {
  const rand = seededRandom(20261123);
  const items: IngestItemInit[] = [];
  const returning: string[] = [];
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const item = (
    source: Source,
    at: number,
    ip: string,
    agent: string,
    body: IngestItemInit["body"],
  ) =>
    items.push({
      source,
      siteId,
      receivedAtMs: BigInt(Math.round(at)),
      clientIp: ip,
      userAgent: agent,
      body,
    });
  for (let day = days; day >= 1; day--) {
    const start = today - day * DAY_MS;
    const weekday = new Date(start).getUTCDay();
    const growth = 1 + (days - day) / days / 2;
    const visits = Math.round((weekday === 0 || weekday === 6 ? 18 : 30) * growth + rand() * 10);
    for (let v = 0; v < visits; v++) {
      const back = returning.length > 0 && rand() < 0.3;
      const visitor = back ? pick(rand, returning) : crypto.randomUUID();
      if (!back) returning.push(visitor);
      const session = crypto.randomUUID();
      const arrival = weighted(rand, ARRIVALS);
      const agent = pick(rand, AGENTS);
      const ip = pick(rand, ADDRESSES);
      // Local daytime in Europe: 06:00 to 21:00 UTC.
      let at = start + (6 + rand() * 15) * 3_600_000;
      const views = 1 + Math.floor(rand() * rand() * 5);
      let path = pick(rand, PAGES.slice(0, 6));
      let landing = "";
      for (let i = 0; i < views; i++) {
        const url = ORIGIN + (i === 0 ? arrival.landing(path) : path);
        if (i === 0) landing = url;
        const view: JsonObject = {
          u: url,
          v: visitor,
          s: session,
          t: `Nordlicht ${path}`,
          l: "de-DE",
          tz: "Europe/Berlin",
          sw: 1440,
          sh: 900,
        };
        if (i === 0 && arrival.referrer) view.r = arrival.referrer;
        if (i > 0) view.a = landing;
        item(Source.BROWSER, at, ip, agent, ingestBodyOf("pageView", view, { gpc: false }));
        at += (20 + rand() * 160) * 1000;
        path = pick(rand, PAGES);
      }
      const roll = rand();
      if (roll < 0.06) {
        item(
          Source.BROWSER,
          at,
          ip,
          agent,
          ingestBodyOf("event", {
            n: "newsletter_signup",
            v: visitor,
            s: session,
            u: `${ORIGIN}${path}`,
            p: { source: "footer", double_opt_in: true },
          }, { gpc: false }),
        );
      } else if (roll < 0.1) {
        const quantity = 1 + Math.floor(rand() * 3);
        item(
          Source.SERVER,
          at + 60_000,
          ip,
          agent,
          ingestBodyOf("event", {
            name: "purchase",
            event_id: crypto.randomUUID(),
            visitor_id: visitor,
            session_id: session,
            url: `${ORIGIN}/coffee`,
            value: quantity * 1490,
            currency: "EUR",
            params: {
              product: pick(rand, ["Ethiopia Guji", "Brazil Cerrado", "Espresso Nord"]),
              quantity,
              gift: rand() < 0.2,
            },
          }, { gpc: false }),
        );
      }
    }
  }
  return items;
}

/** Writes the history through ingest-service in batches; returns how many items it stored. */
export async function loadDemoHistory(
  ingest: Client<typeof IngestService>,
  siteId: string,
  now: number,
): Promise<number> {
  const items = demoHistory(siteId, now);
  let stored = 0;
  for (let i = 0; i < items.length; i += 500) {
    const { results } = await ingest.ingest({ items: items.slice(i, i + 500) });
    stored += results.filter((r) => r.outcome === Outcome.STORED).length;
  }
  return stored;
}
