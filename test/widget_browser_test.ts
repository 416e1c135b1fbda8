/// <reference lib="dom" />
/**
 * The widget in Chromium against the running system: what it sends, what it
 * keeps in the browser, and what ends up stored (read back through the
 * operator's exports).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  type Beacon,
  type Browser,
  BROWSER_TESTS,
  type BrowserContext,
  launchBrowser,
  type Page,
  type PageServer,
  recordBeacons,
  startPageServer,
  storage,
  widgetPage,
} from "./helpers/browser.ts";
import { exportRows, type Row, waitForRows } from "./helpers/exports.ts";

const SITE = "shop";
let sys: TestSystem;
let browser: Browser;
let pages: PageServer;
let context: BrowserContext;
let pageErrors: string[];
let serial = 0;

/** A fresh path per test, so stored rows can be told apart. */
const unique = (name: string) => `/t/${name}-${Date.now().toString(36)}-${serial++}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function open(path: string, html: string, init?: (page: Page) => Promise<unknown>) {
  pages.add(path.split("?")[0], html);
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  const beacons = await recordBeacons(page);
  await init?.(page);
  await page.goto(pages.origin + path);
  await page.waitForLoadState("load");
  return { page, beacons };
}

const views = (beacons: Beacon[]) => beacons.filter((b) => b.path === "/marketing/view");
const acts = (beacons: Beacon[]) => beacons.filter((b) => b.path === "/marketing/act");
const storedViews = () => exportRows(sys, "pageviews", SITE);
const storedEvents = () => exportRows(sys, "events", SITE);
const withUrl = (rows: Row[], path: string) => rows.filter((r) => String(r.url).includes(path));

describe.skipIf(!BROWSER_TESTS)("the widget in Chromium", () => {
  beforeAll(async () => {
    sys = await startTestSystem({ seed: await readFixture("widget-site.json") });
    browser = await launchBrowser();
    pages = startPageServer();
  });
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await sys?.close();
  });
  /** An ordinary desktop Chrome: headless Chromium names itself HeadlessChrome, a bot. */
  const DESKTOP_CHROME =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

  beforeEach(async () => {
    context = await browser.newContext({ userAgent: DESKTOP_CHROME });
    pageErrors = [];
  });
  afterEach(async () => {
    await context?.close();
    // The widget must never break the page it runs on.
    expect(pageErrors).toEqual([]);
  });

  describe("page views", () => {
    it("counts the page on load by beacon, with the page's facts, UTM tags and ad link", async () => {
      const path = unique("load");
      const query =
        "?utm_source=newsletter&utm_medium=email&utm_campaign=spring&dl=AbCdEfGhIj&token=secret1";
      const { page, beacons } = await open(
        path + query,
        widgetPage({ gateway: sys.url, title: "Load test" }),
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      const [beacon] = views(beacons);
      expect(beacon.request.resourceType()).toBe("ping");
      expect(beacon.request.headers()["content-type"]).toMatch(/^text\/plain/);
      const ids = await storage(page);
      expect(ids.crm_vid).toMatch(/^[0-9a-f-]{32,36}$/);
      expect(beacon.body).toMatchObject({ v: ids.crm_vid, s: ids.crm_sid, t: "Load test", r: "" });
      expect(beacon.body.u).toBe(pages.origin + path + query);
      for (const key of ["sw", "sh", "vw", "vh", "pr"]) {
        expect(typeof beacon.body[key]).toBe("number");
      }
      expect(beacon.body.l).toBe(await page.evaluate(() => navigator.language));
      expect(beacon.body.tz).toBe(
        await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
      );

      const [stored] = withUrl(
        await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1),
        path,
      );
      expect(stored).toMatchObject({
        visitorId: ids.crm_vid,
        sessionId: ids.crm_sid,
        title: "Load test",
        utmSource: "newsletter",
        utmMedium: "email",
        utmCampaign: "spring",
        adLink: "AbCdEfGhIj",
        channel: "email",
        newVisitor: true,
        bot: false,
      });
      // The token is stripped before storage; the tags and the ad link code stay.
      expect(String(stored.url)).not.toContain("secret1");
      expect(String(stored.url)).toContain("dl=AbCdEfGhIj");
      expect(stored.language).toBe(beacon.body.l);
      expect(stored.timeZone).toBe(beacon.body.tz);
      expect(stored).toMatchObject({ browser: "Chrome", os: "Linux", device: "desktop" });
      expect(stored.screen).toBe(`${beacon.body.sw}x${beacon.body.sh}`);
      expect(stored.viewport).toBe(`${beacon.body.vw}x${beacon.body.vh}`);
      expect(stored.pixelRatio).toBe(beacon.body.pr);
    });

    it("attributes the rest of the session to the landing page's UTM tags and ad link", async () => {
      const path = unique("landing");
      const { page, beacons } = await open(
        path + "?utm_source=partner&utm_medium=cpc&dl=Zz9Yy8Xx7W",
        widgetPage({ gateway: sys.url }),
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      await page.evaluate((p) => history.pushState({}, "", p + "/pricing"), path);
      await expect.poll(() => views(beacons).length).toBe(2);
      await page.evaluate(() =>
        (window as unknown as { crmTrack: (n: string) => void }).crmTrack("newsletter")
      );
      await expect.poll(() => acts(beacons).length).toBe(1);
      const later = withUrl(
        await waitForRows(storedViews, (rows) => withUrl(rows, path + "/pricing").length === 1),
        path + "/pricing",
      )[0];
      expect(later).toMatchObject({
        utmSource: "partner",
        utmMedium: "cpc",
        adLink: "Zz9Yy8Xx7W",
        channel: "paid",
      });
      const [event] = withUrl(
        await waitForRows(storedEvents, (rows) => withUrl(rows, path).length === 1),
        path,
      );
      expect(event).toMatchObject({ utmSource: "partner", adLink: "Zz9Yy8Xx7W", channel: "paid" });
    });

    it("flags headless Chromium as a bot and keeps its page view", async () => {
      await context.close();
      context = await browser.newContext();
      const path = unique("headless");
      const { beacons } = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(beacons).length).toBe(1);
      const [stored] = withUrl(
        await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1),
        path,
      );
      expect(stored.bot).toBe(true);
    });

    it("counts single-page navigation once per burst, with the previous page as referrer", async () => {
      const path = unique("spa");
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(beacons).length).toBe(1);
      await page.evaluate((p) => history.pushState({}, "", p + "/a"), path);
      await expect.poll(() => views(beacons).length).toBe(2);
      expect(views(beacons)[1].body).toMatchObject({
        u: pages.origin + path + "/a",
        r: pages.origin + path,
      });

      // A burst (push, push, replace) inside 300 ms is one page view, of where it ended.
      await page.evaluate((p) => {
        history.pushState({}, "", p + "/b");
        history.pushState({}, "", p + "/c");
        history.replaceState({}, "", p + "/c?tab=2");
      }, path);
      await expect.poll(() => views(beacons).length).toBe(3);
      await sleep(600);
      expect(views(beacons)).toHaveLength(3);
      expect(views(beacons)[2].body).toMatchObject({
        u: pages.origin + path + "/c?tab=2",
        r: pages.origin + path + "/a",
      });

      // A hash-only change is not a page view; going back is.
      await page.evaluate(() => (location.hash = "#section"));
      await sleep(600);
      expect(views(beacons)).toHaveLength(3);
      await page.goBack();
      await page.goBack();
      await expect.poll(() => views(beacons).length).toBe(4);
      await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 4);
    });

    it("counts hash changes with data-spa=hash and nothing after load with data-spa=off", async () => {
      const hashPath = unique("hash");
      const hash = await open(hashPath, widgetPage({ gateway: sys.url, data: { spa: "hash" } }));
      await expect.poll(() => views(hash.beacons).length).toBe(1);
      await hash.page.evaluate(() => (location.hash = "#pricing"));
      await expect.poll(() => views(hash.beacons).length).toBe(2);
      expect(views(hash.beacons)[1].body.u).toBe(pages.origin + hashPath + "#pricing");

      const offPath = unique("off");
      const off = await open(offPath, widgetPage({ gateway: sys.url, data: { spa: "off" } }));
      await expect.poll(() => views(off.beacons).length).toBe(1);
      await off.page.evaluate((p) => history.pushState({}, "", p + "/next"), offPath);
      await sleep(700);
      expect(views(off.beacons)).toHaveLength(1);
    });

    it("still counts a page whose URL and title are huge (the body stays under 8 KB)", async () => {
      const path = unique("huge");
      const title = "Ü".repeat(3000);
      const { beacons } = await open(
        `${path}?q=${"x".repeat(9000)}`,
        widgetPage({ gateway: sys.url, title }),
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      const [stored] = await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1)
        .then((rows) => withUrl(rows, path));
      expect(String(stored.url).length).toBeGreaterThan(2000);
      expect(stored.title).toBe("Ü".repeat(500));
    });

    it("sends to data-api when the tag names one", async () => {
      const path = unique("api");
      const api = sys.url.replace("127.0.0.1", "localhost");
      const { beacons } = await open(path, widgetPage({ gateway: sys.url, data: { api } }));
      await expect.poll(() => views(beacons).length).toBe(1);
      expect(views(beacons)[0].request.url()).toBe(`${api}/marketing/view`);
      await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1);
    });
  });

  describe("custom events", () => {
    it("sends declared events with ids attached and stores them normalised; drops undeclared names", async () => {
      const path = unique("track");
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(beacons).length).toBe(1);
      const returned = await page.evaluate(() => {
        const w = window as unknown as { crmTrack: (...a: unknown[]) => unknown };
        return [
          typeof w.crmTrack("signup", { plan: "pro", seats: 3, trial: "true", extra: "dropped" }, {
            id: "order-" + Math.random(),
            value: 4900,
            currency: "usd",
          }),
          typeof w.crmTrack("not_declared", { a: 1 }),
        ];
      });
      expect(returned).toEqual(["undefined", "undefined"]);
      await expect.poll(() => acts(beacons).length).toBe(2);
      const ids = await storage(page);
      // Two beacons sent back to back may arrive in either order.
      const signup = acts(beacons).find((b) => b.body.n === "signup");
      expect(signup?.body).toMatchObject({
        n: "signup",
        v: ids.crm_vid,
        s: ids.crm_sid,
        val: 4900,
        cur: "usd",
      });

      const events = withUrl(
        await waitForRows(storedEvents, (rows) => withUrl(rows, path).length >= 1),
        path,
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        name: "signup",
        visitorId: ids.crm_vid,
        sessionId: ids.crm_sid,
        params: { plan: "pro", seats: 3, trial: true },
        value: 4900,
        currency: "usd",
        source: "browser",
      });
      await sleep(500);
      expect(withUrl(await storedEvents(), path).map((e) => e.name)).toEqual(["signup"]);
    });

    it("never throws, whatever it is given", async () => {
      const path = unique("nothrow");
      const { page } = await open(path, widgetPage({ gateway: sys.url }));
      const outcome = await page.evaluate(() => {
        const w = window as unknown as { crmTrack: (...a: unknown[]) => unknown };
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        try {
          w.crmTrack();
          w.crmTrack(42);
          w.crmTrack("signup", "not an object");
          w.crmTrack("signup", circular);
          w.crmTrack("signup", {}, { value: Symbol("x") });
          const consent = (window as unknown as { crmConsent: { push(...a: unknown[]): void } })
            .crmConsent;
          consent.push(Object.create(null), { toString: () => 1 / 0 }, 42);
          return "no exception";
        } catch (error) {
          return String(error);
        }
      });
      expect(outcome).toBe("no exception");
    });

    it("replays crmq on load, after the page view, and sends later pushes at once", async () => {
      const path = unique("queue");
      const before = `<script>window.crmq = window.crmq || [];
      crmq.push(["newsletter", { source: "queued" }]);</script>`;
      // The order the widget sends in (network arrival order is not guaranteed).
      const { page, beacons } = await open(
        path,
        widgetPage({ gateway: sys.url, before }),
        (p) =>
          p.addInitScript(() => {
            const w = window as unknown as { sent: string[] };
            w.sent = [];
            const send = navigator.sendBeacon.bind(navigator);
            navigator.sendBeacon = (url, data) => {
              w.sent.push(new URL(String(url)).pathname);
              return send(url, data);
            };
          }),
      );
      await expect.poll(() => acts(beacons).length).toBe(1);
      expect(await page.evaluate(() => (window as unknown as { sent: string[] }).sent)).toEqual([
        "/marketing/view",
        "/marketing/act",
      ]);
      expect(acts(beacons)[0].body).toMatchObject({ n: "newsletter", p: { source: "queued" } });
      await page.evaluate(() =>
        (window as unknown as { crmq: unknown[][] }).crmq.push(["newsletter", { source: "live" }])
      );
      await expect.poll(() => acts(beacons).length).toBe(2);
      const events = await waitForRows(storedEvents, (rows) => withUrl(rows, path).length === 2);
      expect(withUrl(events, path).map((e) => (e.params as Row).source)).toEqual([
        "queued",
        "live",
      ]);
    });

    it("keeps the arrays a snippet holds working after load", async () => {
      const path = unique("held");
      const before = `<script>var q = window.crmq = window.crmq || [];
      var c = window.crmConsent = window.crmConsent || [];
      q.push(["newsletter", { source: "queued" }]);</script>`;
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url, before }));
      await expect.poll(() => acts(beacons).length).toBe(1);
      const isArray = await page.evaluate(() => {
        const w = window as unknown as { q: unknown[]; crmq: unknown };
        w.q.push(["newsletter", { source: "held" }]);
        return Array.isArray(w.crmq) && w.crmq === w.q;
      });
      expect(isArray).toBe(true);
      await expect.poll(() => acts(beacons).map((b) => (b.body.p as Row).source)).toEqual([
        "queued",
        "held",
      ]);
      await page.evaluate(() => (window as unknown as { c: unknown[] }).c.push("deny"));
      expect((await storage(page)).crm_consent).toBe("denied");
    });
  });

  describe("consent", () => {
    async function countCookieReads(page: Page) {
      await page.addInitScript(() => {
        const native = Object.getOwnPropertyDescriptor(Document.prototype, "cookie")!;
        const w = window as unknown as { cookieReads: number };
        w.cookieReads = 0;
        Object.defineProperty(document, "cookie", {
          configurable: true,
          get() {
            w.cookieReads++;
            return native.get!.call(document);
          },
          set(value) {
            native.set!.call(document, value);
          },
        });
      });
    }
    const cookieReads = (page: Page) =>
      page.evaluate(() => (window as unknown as { cookieReads: number }).cookieReads);

    it("in consent mode sends nothing, creates no ids and reads no cookie until granted; then one page view", async () => {
      const path = unique("consent");
      const { page, beacons } = await open(
        path,
        widgetPage({ gateway: sys.url, data: { consent: "required" } }),
        countCookieReads,
      );
      await page.evaluate(() => {
        const w = window as unknown as { crmTrack: (...a: unknown[]) => void; events: string[] };
        w.events = [];
        // A listener finds the ids a grant created.
        addEventListener(
          "crm:consent",
          () =>
            w.events.push(
              (window as unknown as { crmConsent: { status(): string } }).crmConsent.status() +
                (localStorage.getItem("crm_vid") ? " with ids" : " without ids"),
            ),
        );
        w.crmTrack("newsletter", { source: "before consent" });
      });
      await sleep(700);
      expect(beacons).toEqual([]);
      expect(await storage(page)).toEqual({
        crm_vid: null,
        crm_sid: null,
        crm_sat: null,
        crm_consent: null,
      });
      expect(await cookieReads(page)).toBe(0);
      expect(
        await page.evaluate(() => {
          const c = (window as unknown as { crmConsent: { status(): string; required: boolean } })
            .crmConsent;
          return [c.status(), c.required];
        }),
      ).toEqual(["pending", true]);

      await page.evaluate(() =>
        (window as unknown as { crmConsent: { grant(): void } }).crmConsent.grant()
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      await page.evaluate(() =>
        (window as unknown as { crmConsent: { grant(): void } }).crmConsent.grant()
      );
      await sleep(500);
      expect(views(beacons)).toHaveLength(1);
      expect(acts(beacons)).toHaveLength(0); // nothing sent after the fact
      expect(await page.evaluate(() => (window as unknown as { events: string[] }).events)).toEqual(
        [
          "granted with ids",
        ],
      );
      const ids = await storage(page);
      expect(ids.crm_consent).toBe("granted");
      expect(ids.crm_vid).not.toBeNull();
      await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1);
      expect(withUrl(await storedEvents(), path)).toEqual([]);

      // The choice is remembered: the next load counts at once.
      const again = await open(
        path + "/next",
        widgetPage({ gateway: sys.url, data: { consent: "required" } }),
      );
      await expect.poll(() => views(again.beacons).length).toBe(1);
    });

    it("honours grant pushed to crmConsent before the widget loads", async () => {
      const path = unique("early");
      const before =
        `<script>window.crmConsent = window.crmConsent || []; crmConsent.push("grant");</script>`;
      const { page, beacons } = await open(
        path,
        widgetPage({ gateway: sys.url, data: { consent: "required" }, before }),
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      await sleep(400);
      expect(views(beacons)).toHaveLength(1);
      expect(
        await page.evaluate(() =>
          (window as unknown as { crmConsent: { status(): string } }).crmConsent.status()
        ),
      )
        .toBe("granted");
      // push keeps working after load.
      await page.evaluate(() =>
        (window as unknown as { crmConsent: unknown[] }).crmConsent.push("deny")
      );
      expect((await storage(page)).crm_consent).toBe("denied");
    });

    it("deny erases the ids, is remembered, and works without consent mode", async () => {
      const path = unique("deny");
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(beacons).length).toBe(1);
      expect((await storage(page)).crm_vid).not.toBeNull();
      const fired = await page.evaluate(() => {
        const seen: string[] = [];
        addEventListener("crm:consent", () => seen.push("fired"));
        (window as unknown as { crmConsent: { deny(): void } }).crmConsent.deny();
        (window as unknown as { crmTrack: (n: string) => void }).crmTrack("newsletter");
        return seen;
      });
      expect(fired).toEqual(["fired"]);
      expect(await storage(page)).toEqual({
        crm_vid: null,
        crm_sid: null,
        crm_sat: null,
        crm_consent: "denied",
      });
      await sleep(500);
      expect(acts(beacons)).toHaveLength(0);
      const again = await open(path + "/again", widgetPage({ gateway: sys.url }));
      await sleep(700);
      expect(again.beacons).toEqual([]);
      expect(
        await again.page.evaluate(() =>
          (window as unknown as { crmConsent: { status(): string } }).crmConsent.status()
        ),
      )
        .toBe("denied");
    });

    it("counts a page once when consent comes while its navigation waits for the debounce", async () => {
      const path = unique("grantnav");
      const { page, beacons } = await open(
        path,
        widgetPage({ gateway: sys.url, data: { consent: "required" } }),
      );
      await page.evaluate(() => {
        history.pushState({}, "", location.pathname + "/next");
        (window as unknown as { crmConsent: { grant(): void } }).crmConsent.grant();
      });
      await expect.poll(() => views(beacons).length).toBe(1);
      await sleep(700); // past the debounce
      expect(views(beacons).map((b) => new URL(String(b.body.u)).pathname)).toEqual([
        path + "/next",
      ]);
    });

    it("keeps the landing page's campaign when consent comes after the page moved", async () => {
      const path = unique("landconsent");
      const { page, beacons } = await open(
        path + "?utm_source=partner&utm_medium=cpc&dl=Qq1Ww2Ee3R",
        widgetPage({ gateway: sys.url, data: { consent: "required" } }),
      );
      await page.evaluate(() => {
        history.replaceState({}, "", location.pathname); // the page tidies its URL
        history.pushState({}, "", location.pathname + "/menu");
      });
      await sleep(500);
      expect(beacons).toEqual([]);
      await page.evaluate(() =>
        (window as unknown as { crmConsent: { grant(): void } }).crmConsent.grant()
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      const [sent] = views(beacons);
      expect(new URL(String(sent.body.a)).search).toBe(
        "?utm_source=partner&utm_medium=cpc&dl=Qq1Ww2Ee3R",
      );
      const [stored] = withUrl(
        await waitForRows(storedViews, (rows) => withUrl(rows, path + "/menu").length === 1),
        path + "/menu",
      );
      expect(stored).toMatchObject({
        url: `${pages.origin}${path}/menu`,
        referrer: null,
        utmSource: "partner",
        utmMedium: "cpc",
        adLink: "Qq1Ww2Ee3R",
        channel: "paid",
      });
      // The next page is an ordinary one: no landing URL, the previous page as referrer.
      await page.evaluate(() => history.pushState({}, "", location.pathname + "/2"));
      await expect.poll(() => views(beacons).length).toBe(2);
      expect(views(beacons)[1].body.a).toBeUndefined();
      expect(views(beacons)[1].body.r).toBe(`${pages.origin}${path}/menu`);
    });

    it("follows a choice made in another tab of the site", async () => {
      const path = unique("tabs");
      const first = await open(path, widgetPage({ gateway: sys.url }));
      const second = await open(path + "/other", widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(first.beacons).length + views(second.beacons).length).toBe(2);
      const seen = await first.page.evaluate(() => {
        const w = window as unknown as { seen: string[] };
        w.seen = [];
        addEventListener("crm:consent", () =>
          w.seen.push(
            (window as unknown as { crmConsent: { status(): string } }).crmConsent.status(),
          ));
        return w.seen;
      });
      expect(seen).toEqual([]);
      await second.page.evaluate(() =>
        (window as unknown as { crmConsent: { deny(): void } }).crmConsent.deny()
      );
      await expect.poll(() =>
        first.page.evaluate(() => (window as unknown as { seen: string[] }).seen)
      ).toEqual(["denied"]);
      await first.page.evaluate(() => {
        history.pushState({}, "", location.pathname + "/after");
        (window as unknown as { crmTrack: (n: string) => void }).crmTrack("newsletter");
      });
      await sleep(700);
      expect(views(first.beacons)).toHaveLength(1);
      expect(acts(first.beacons)).toHaveLength(0);
      expect(await storage(first.page)).toEqual({
        crm_vid: null,
        crm_sid: null,
        crm_sat: null,
        crm_consent: "denied",
      });
    });

    it("reads ad cookies when allowed, and never under Global Privacy Control", async () => {
      await context.addCookies(
        ["_ga=GA1.1.123.456", "_gcl_aw=GCL.1.abc", "_fbp=fb.1.2.3", "session=private"].map((c) => {
          const [name, value] = c.split("=");
          return { name, value, url: pages.origin };
        }),
      );
      const path = unique("cookies");
      const plain = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(plain.beacons).length).toBe(1);
      expect(views(plain.beacons)[0].body.c).toEqual({
        _ga: "GA1.1.123.456",
        _gcl_aw: "GCL.1.abc",
        _fbp: "fb.1.2.3",
      });
      const [stored] = withUrl(
        await waitForRows(storedViews, (rows) => withUrl(rows, path).length === 1),
        path,
      );
      expect(stored.adCookies).toMatchObject({
        _ga: "GA1.1.123.456",
        _gcl_aw: "GCL.1.abc",
        _fbp: "fb.1.2.3",
      });

      const gpcPath = unique("gpc");
      const gpc = await open(gpcPath, widgetPage({ gateway: sys.url }), async (page) => {
        await page.addInitScript(() =>
          Object.defineProperty(Navigator.prototype, "globalPrivacyControl", { get: () => true })
        );
        await countCookieReads(page);
      });
      await expect.poll(() => views(gpc.beacons).length).toBe(1);
      expect(views(gpc.beacons)[0].body.c).toEqual({});
      expect(await cookieReads(gpc.page)).toBe(0);
      expect(
        await gpc.page.evaluate(() =>
          (window as unknown as { crmConsent: { gpc: boolean } }).crmConsent.gpc
        ),
      ).toBe(true);
    });
  });

  describe("ids and sessions", () => {
    it("keeps ids in memory when storage is blocked", async () => {
      const path = unique("blocked");
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url }), async (p) => {
        await p.addInitScript(() =>
          Object.defineProperty(window, "localStorage", {
            get() {
              throw new DOMException("blocked", "SecurityError");
            },
          })
        );
      });
      await expect.poll(() => views(beacons).length).toBe(1);
      await page.evaluate(() =>
        (window as unknown as { crmTrack: (n: string) => void }).crmTrack("newsletter")
      );
      await expect.poll(() => acts(beacons).length).toBe(1);
      const view = views(beacons)[0].body;
      expect(view.v).toBeTruthy();
      expect(acts(beacons)[0].body).toMatchObject({ v: view.v, s: view.s });
    });

    it("starts a new session after 30 minutes without activity, not before", async () => {
      const seeded = (minutesAgo: number) => async (page: Page) => {
        await page.addInitScript((ago) => {
          if (sessionStorage.getItem("seeded")) return;
          sessionStorage.setItem("seeded", "1");
          localStorage.setItem("crm_vid", "visitor-fixed");
          localStorage.setItem("crm_sid", "session-old");
          localStorage.setItem("crm_sat", String(Date.now() - ago * 60_000));
        }, minutesAgo);
      };
      const recent = await open(unique("recent"), widgetPage({ gateway: sys.url }), seeded(29));
      await expect.poll(() => views(recent.beacons).length).toBe(1);
      expect(views(recent.beacons)[0].body).toMatchObject({ v: "visitor-fixed", s: "session-old" });

      await context.close();
      context = await browser.newContext({ userAgent: DESKTOP_CHROME });
      const stale = await open(unique("stale"), widgetPage({ gateway: sys.url }), seeded(31));
      await expect.poll(() => views(stale.beacons).length).toBe(1);
      expect(views(stale.beacons)[0].body.v).toBe("visitor-fixed");
      expect(views(stale.beacons)[0].body.s).not.toBe("session-old");
      expect(Number((await storage(stale.page)).crm_sat)).toBeGreaterThan(Date.now() - 60_000);
    });

    it("sets no cookies of its own", async () => {
      const path = unique("nocookie");
      const { page, beacons } = await open(path, widgetPage({ gateway: sys.url }));
      await expect.poll(() => views(beacons).length).toBe(1);
      await page.evaluate(() =>
        (window as unknown as { crmTrack: (n: string) => void }).crmTrack("newsletter")
      );
      await expect.poll(() => acts(beacons).length).toBe(1);
      expect(await context.cookies()).toEqual([]);
    });
  });

  describe("where nothing is tracked", () => {
    it("tracks nothing inside the CRM live-editing frame", async () => {
      const child = unique("framed");
      pages.add(child, widgetPage({ gateway: sys.url }));
      const parent = unique("editor");
      const { page, beacons } = await open(
        parent,
        `<!doctype html><iframe name="crm-live-edit" src="${child}"></iframe><iframe name="preview" src="${child}?other"></iframe>`,
      );
      await expect.poll(() => views(beacons).length).toBe(1);
      await sleep(500);
      expect(views(beacons).map((b) => b.body.u)).toEqual([pages.origin + child + "?other"]);
      const flagged = await open(
        unique("flag") + "?crm_live_edit=1",
        widgetPage({ gateway: sys.url }),
      );
      await sleep(700);
      expect(flagged.beacons).toEqual([]);
      expect(page.frames()).toHaveLength(3);
    });

    it("stores nothing from a page on an origin the site does not list (400 unknown_domain)", async () => {
      const path = unique("foreign");
      pages.add(path, widgetPage({ gateway: sys.url }));
      const page = await context.newPage();
      const statuses: number[] = [];
      page.on("response", (response) => {
        if (response.url().includes("/marketing/view")) statuses.push(response.status());
      });
      const beacons = await recordBeacons(page);
      await page.goto(pages.foreignOrigin + path);
      await expect.poll(() => views(beacons).length).toBe(1);
      // The same request answered to the test directly shows the refusal.
      const replay = await fetch(`${sys.url}/marketing/view`, {
        method: "POST",
        headers: { "content-type": "text/plain", origin: pages.foreignOrigin },
        body: JSON.stringify(views(beacons)[0].body),
      });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toEqual({ message: "unknown_domain" });
      await sleep(500);
      expect(withUrl(await storedViews(), path)).toEqual([]);
      if (statuses.length) expect(statuses).toEqual([400]);
    });
  });
});
