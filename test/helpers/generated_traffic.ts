/**
 * Generated traffic for the tests that compare the derived tables with the
 * stored rows and for `deno task bench stats`: seeded visits (sessions of
 * page views with events, some leads, some rows without a session, some
 * bots) as the writer's items, in groups as group commit would write them.
 * Visits start anywhere in a time span and last up to ~40 minutes, so they
 * cross 15-minute buckets, hours and local midnights.
 */
import type { EventRow, LeadRow, PageViewRow, WriteItem } from "../../services/ingest/rows.ts";
import { NO_ATTRIBUTION } from "../../services/ingest/rows.ts";
import { seededRandom } from "../../services/lib/random.ts";

const PAGES = ["/", "/pricing", "/blog/a", "/blog/b", "/docs/start", "/contact"];
const CHANNELS = [
  { channel: "organic_search", referrer: "https://www.google.com/", utm: null },
  { channel: "direct", referrer: null, utm: null },
  { channel: "social", referrer: "https://www.instagram.com/", utm: null },
  { channel: "referral", referrer: "https://news.example/story?id=7", utm: null },
  { channel: "email", referrer: null, utm: ["news", "email", "spring"] },
  { channel: "paid_search", referrer: null, utm: ["google", "cpc", "brand"] },
] as const;
const COUNTRIES = ["DE", "NP", "US", "AU", null];
const DEVICES = ["desktop", "mobile", "tablet"];
const BROWSERS = ["Chrome", "Safari", "Firefox"];
const SCREENS = ["390x844", "820x1180", "1280x800", "1920x1080", null];
const EVENTS = [
  { name: "signup", value: null, currency: null },
  { name: "purchase", value: 2500, currency: "USD" },
  { name: "purchase", value: 1200, currency: "EUR" },
  { name: "download", value: null, currency: null },
];
const PLANS = ["free", "pro", "team"];

/** The event types the traffic's events and their parameters belong to (for a manifest). */
export const TRAFFIC_EVENT_TYPES = [
  {
    name: "signup",
    params: [{ key: "plan", type: "string" }, { key: "seats", type: "number" }],
  },
  { name: "purchase", params: [{ key: "plan", type: "string" }] },
  { name: "download", params: [{ key: "ok", type: "boolean" }] },
];

export interface TrafficOptions {
  siteId: string;
  /** The span visits start in: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  /** Page views to generate (about; whole visits). */
  pageViews: number;
  /** Events per page view (about). */
  eventsPerView?: number;
  seed?: number;
  /** A prefix of session and visitor ids, so runs do not collide. */
  idPrefix?: string;
}

/**
 * The items of the traffic, in visits, each visit's rows in time order;
 * visits in start order, a few of them late (a group written after a later
 * one), as replicas and retries make happen.
 */
export function* generateVisits(options: TrafficOptions): Generator<WriteItem[]> {
  const rnd = seededRandom(options.seed ?? 1);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)];
  const prefix = options.idPrefix ?? "g";
  const ratio = options.eventsPerView ?? 0.1;
  const span = options.toMs - options.fromMs;
  const visitorCount = Math.max(1, Math.round(options.pageViews / 6));
  let n = 0;
  for (let visit = 0; n < options.pageViews; visit++) {
    // Start times rise through the span, with jitter so some arrive out of order.
    const start = Math.floor(
      options.fromMs + (n / options.pageViews) * span + (rnd() - 0.5) * 3_600_000,
    );
    const at0 = Math.min(options.toMs - 1, Math.max(options.fromMs, start));
    const visitor = rnd() < 0.05 ? null : `${prefix}v${Math.floor(rnd() * visitorCount)}`;
    const noSession = rnd() < 0.04;
    const session = noSession ? null : `${prefix}s${visit}`;
    const bot = rnd() < 0.03;
    const arrival = pick(CHANNELS);
    const views = 1 + Math.floor(rnd() * rnd() * 6);
    const items: WriteItem[] = [];
    let at = at0;
    const country = pick(COUNTRIES);
    const device = pick(DEVICES);
    const browser = pick(BROWSERS);
    const screen = pick(SCREENS);
    for (let i = 0; i < views; i++) {
      const path = pick(PAGES);
      const query = i === 0 && arrival.utm
        ? `?utm_source=${arrival.utm[0]}&utm_medium=${arrival.utm[1]}&utm_campaign=${
          arrival.utm[2]
        }`
        : "";
      const row: PageViewRow = {
        site_id: options.siteId,
        received_at: new Date(at).toISOString(),
        visitor_id: visitor,
        session_id: session,
        url: `https://gen.example${path}${query}`,
        title: path,
        referrer: i === 0 ? arrival.referrer : null,
        ad_cookies: {},
        screen,
        viewport: null,
        pixel_ratio: null,
        language: "en",
        time_zone: null,
        country,
        device,
        browser,
        os: null,
        bot,
        ip: null,
        attribution: i === 0
          ? {
            ...NO_ATTRIBUTION,
            channel: arrival.channel,
            utm_source: arrival.utm?.[0] ?? null,
            utm_medium: arrival.utm?.[1] ?? null,
            utm_campaign: arrival.utm?.[2] ?? null,
          }
          : { ...NO_ATTRIBUTION, channel: "direct" },
      };
      items.push({ kind: "view", row });
      n++;
      while (rnd() < ratio * 0.9) {
        const e = pick(EVENTS);
        const event: EventRow = {
          site_id: options.siteId,
          received_at: new Date(Math.min(options.toMs - 1, at + 1000)).toISOString(),
          name: e.name,
          event_id: null,
          // Server events come with a session alone; the writer gives them its visitor.
          visitor_id: rnd() < 0.2 ? null : visitor,
          session_id: session,
          url: `https://gen.example${path}`,
          params: e.name === "signup"
            ? { plan: pick(PLANS), seats: 1 + Math.floor(rnd() * 4) / 2 }
            : e.name === "purchase"
            ? (rnd() < 0.7 ? { plan: pick(PLANS) } : {})
            : { ok: rnd() < 0.5 },
          value: e.value,
          currency: e.currency,
          source: "browser",
          bot,
        };
        items.push({ kind: "event", row: event });
      }
      at = Math.min(options.toMs - 1, at + Math.floor(rnd() * 8 * 60_000));
    }
    if (rnd() < 0.02) {
      const lead: LeadRow = {
        id: crypto.randomUUID(),
        site_id: options.siteId,
        received_at: new Date(at).toISOString(),
        lead_id: null,
        source: "browser",
        form: "contact",
        name: null,
        email: "someone@example.com",
        phone: null,
        message: null,
        fields: {},
        visitor_id: visitor,
        session_id: session,
        url: null,
      };
      items.push({ kind: "lead", row: lead });
    }
    // A few visits arrive last row first: the visit's first page view is written after others.
    yield rnd() < 0.03 ? items.reverse() : items;
  }
}

/** The generated items in groups of about `size` items. */
export function* inGroups(visits: Iterable<WriteItem[]>, size: number): Generator<WriteItem[]> {
  let group: WriteItem[] = [];
  for (const items of visits) {
    group.push(...items);
    if (group.length >= size) {
      yield group;
      group = [];
    }
  }
  if (group.length) yield group;
}
