/**
 * A few weeks of believable history for the demo site, so the dashboard's
 * charts are not empty on first start: visits from search, social, a
 * newsletter, paid campaigns and direct, on phones, tablets and desktops,
 * page views, custom events with their parameters and contact-form leads,
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
    weight: 8,
    landing: (p) =>
      `${p}?utm_source=google&utm_medium=cpc&utm_campaign=spring-roasts&utm_term=single+origin+coffee&utm_content=text-ad&dl=spring-ads`,
  },
  {
    weight: 6,
    landing: (p) =>
      `${p}?utm_source=instagram&utm_medium=paid-social&utm_campaign=spring-roasts&utm_content=story&dl=insta-story`,
  },
];
/** Browsers with the screens they come with, so devices, systems and screen classes vary. */
const AGENTS: { agent: string; screens: [number, number][] }[] = [
  {
    agent:
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    screens: [[1920, 1080], [1366, 768], [1536, 864]],
  },
  {
    agent:
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    screens: [[1440, 900], [1512, 982], [2560, 1440]],
  },
  {
    agent:
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    screens: [[390, 844], [430, 932]],
  },
  {
    agent:
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    screens: [[412, 915], [360, 800]],
  },
  {
    agent:
      "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    screens: [[820, 1180]],
  },
  {
    agent: "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
    screens: [[1280, 800], [1920, 1200]],
  },
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
const NEWSLETTER_FORMS = ["footer", "footer", "blog", "checkout"];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)];
}

function weighted<T extends { weight: number }>(rand: () => number, items: readonly T[]): T {
  let roll = rand() * items.reduce((sum, item) => sum + item.weight, 0);
  for (const item of items) if ((roll -= item.weight) < 0) return item;
  return items[items.length - 1];
}

/** What the visits of one generated stretch of time share. */
interface Traffic {
  siteId: string;
  rand: () => number;
  items: IngestItemInit[];
  /** Visitor ids seen so far, some of whom come back. */
  returning: string[];
}

/**
 * One visit starting at `at`: its page views, and perhaps a newsletter
 * sign-up, a purchase (from the shop's server) or a contact form's lead.
 * Times stay before `until`.
 */
function visit(traffic: Traffic, at: number, until = Infinity): void {
  const { rand, returning } = traffic;
  const back = returning.length > 0 && rand() < 0.3;
  const visitor = back ? pick(rand, returning) : crypto.randomUUID();
  if (!back) returning.push(visitor);
  const session = crypto.randomUUID();
  const arrival = weighted(rand, ARRIVALS);
  const { agent, screens } = pick(rand, AGENTS);
  const [sw, sh] = pick(rand, screens);
  const ip = pick(rand, ADDRESSES);
  const item = (source: Source, time: number, body: IngestItemInit["body"]) =>
    traffic.items.push({
      source,
      siteId: traffic.siteId,
      receivedAtMs: BigInt(Math.round(time)),
      clientIp: ip,
      userAgent: agent,
      body,
    });
  const views = 1 + Math.floor(rand() * rand() * 5);
  let path = pick(rand, PAGES.slice(0, 6));
  let landing = "";
  for (let i = 0; i < views && at < until; i++) {
    const url = ORIGIN + (i === 0 ? arrival.landing(path) : path);
    if (i === 0) landing = url;
    const view: JsonObject = {
      u: url,
      v: visitor,
      s: session,
      t: `Nordlicht ${path}`,
      l: "de-DE",
      tz: "Europe/Berlin",
      sw,
      sh,
    };
    if (i === 0 && arrival.referrer) view.r = arrival.referrer;
    if (i > 0) view.a = landing;
    item(Source.BROWSER, at, ingestBodyOf("pageView", view, { gpc: false }));
    at += (20 + rand() * 160) * 1000;
    path = pick(rand, PAGES);
  }
  const roll = rand();
  if (at >= until) return;
  if (roll < 0.06) {
    item(
      Source.BROWSER,
      at,
      ingestBodyOf("event", {
        n: "newsletter_signup",
        v: visitor,
        s: session,
        u: `${ORIGIN}${path}`,
        p: { source: pick(rand, NEWSLETTER_FORMS), double_opt_in: rand() < 0.7 },
      }, { gpc: false }),
    );
  } else if (roll < 0.1 && at + 60_000 < until) {
    const quantity = 1 + Math.floor(rand() * 3);
    item(
      Source.SERVER,
      at + 60_000,
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
  } else if (roll < 0.13) {
    // The contact form: a view of /contact, then the lead it sends.
    item(
      Source.BROWSER,
      at,
      ingestBodyOf("pageView", {
        u: `${ORIGIN}/contact`,
        v: visitor,
        s: session,
        t: "Nordlicht /contact",
        a: landing,
        sw,
        sh,
      }, { gpc: false }),
    );
    if (at + 45_000 >= until) return;
    item(
      Source.BROWSER,
      at + 45_000,
      ingestBodyOf("lead", {
        form: "contact",
        name: "Demo visitor",
        email: `visitor-${session.slice(0, 8)}@demo.example`,
        message: pick(rand, ["Wholesale prices?", "Do you ship to Austria?", "Gift cards?"]),
        v: visitor,
        s: session,
        u: `${ORIGIN}/contact`,
      }, { gpc: false }),
    );
  }
}

/** The history's items: page views, events and leads of `days` days ending yesterday. */
export function demoHistory(siteId: string, now: number, days = 28): IngestItemInit[] {
  const traffic: Traffic = { siteId, rand: seededRandom(20261123), items: [], returning: [] };
  const { rand } = traffic;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (let day = days; day >= 1; day--) {
    const start = today - day * DAY_MS;
    const weekday = new Date(start).getUTCDay();
    const growth = 1 + (days - day) / days / 2;
    const visits = Math.round((weekday === 0 || weekday === 6 ? 18 : 30) * growth + rand() * 10);
    // Local daytime in Europe: 06:00 to 21:00 UTC.
    for (let v = 0; v < visits; v++) visit(traffic, start + (6 + rand() * 15) * 3_600_000);
  }
  return traffic.items;
}

/**
 * Today's visits up to `now`, a few of them in the last half hour, so the
 * realtime view has visitors on a first start; nothing after `now`.
 */
export function demoToday(siteId: string, now: number): IngestItemInit[] {
  const traffic: Traffic = { siteId, rand: seededRandom(20261124), items: [], returning: [] };
  const { rand } = traffic;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const hours = (now - today) / 3_600_000;
  const earlier = Math.round(hours * 1.5);
  for (let v = 0; v < earlier; v++) visit(traffic, today + rand() * (now - today), now);
  for (let v = 0; v < 6; v++) visit(traffic, now - (1 + rand() * 24) * 60_000, now);
  return traffic.items;
}

/** Writes the history through ingest-service in batches; returns how many items it stored. */
export async function loadDemoHistory(
  ingest: Client<typeof IngestService>,
  siteId: string,
  now: number,
): Promise<number> {
  const items = [...demoHistory(siteId, now), ...demoToday(siteId, now)];
  let stored = 0;
  for (let i = 0; i < items.length; i += 500) {
    const { results } = await ingest.ingest({ items: items.slice(i, i + 500) });
    stored += results.filter((r) => r.outcome === Outcome.STORED).length;
  }
  return stored;
}
