/// <reference lib="dom" />
/**
 * widget.js: counts page views, sends custom events and keeps the visitor's
 * consent choice. Loaded with <script defer src=".../widget.js">; configured
 * by data-spa, data-consent and data-api. Nothing here may break the page, so
 * every entry point swallows its own errors.
 */
import { readSettings } from "./settings.ts";
import { createStore } from "./store.ts";
import { erase, touch } from "./ids.ts";
import { adCookies, environment, inLiveEditor } from "./page.ts";
import { send } from "./send.ts";

type Choice = "granted" | "denied";
type Status = Choice | "pending";
type Options = { id?: string; value?: number; currency?: string };
type Args = [name: string, params?: Record<string, unknown>, options?: Options];

interface Win {
  crmTrack?: ((...args: Args) => void) & { crm?: 1 };
  crmq?: unknown;
  crmConsent?: unknown;
}

const CONSENT = "crm_consent";

function start(w: Win & Window) {
  const settings = readSettings(document);
  if (!settings || w.crmTrack?.crm) return; // no script tag found, or loaded twice
  const store = createStore();
  const live = inLiveEditor();
  const gpc = (navigator as { globalPrivacyControl?: boolean }).globalPrivacyControl == true;
  const stored = store.get(CONSENT);
  let choice: Choice | null = stored == "granted" || stored == "denied" ? stored : null;
  const status = (): Status => choice || "pending";
  // Consent mode counts nothing until granted; a denial stops counting in any mode.
  const allowed = () => !live && (choice == "granted" || (!settings.consentRequired && !choice));

  // The page the visitor is on: its key (what makes it a new page view), URL and referrer.
  const keyOf = () =>
    location.pathname + location.search + (settings.spa == "hash" ? location.hash : "");
  let here = keyOf();
  let hereUrl = location.href;
  let hereReferrer = document.referrer;
  let counted: string | undefined;
  // Where this document opened ("" once a view is sent): its first view
  // carries it and the document's referrer, so a page that moved before
  // consent keeps its campaign.
  let landing = location.href;
  /** Notes a navigation; true when the page changed since the last one noted. */
  const arrive = () => {
    const key = keyOf();
    if (key == here) return false;
    hereReferrer = hereUrl;
    here = key;
    hereUrl = location.href;
    return true;
  };

  const view = () => {
    if (!allowed()) return;
    const { v, s } = touch(store, Date.now());
    // Cut so that even a huge URL, referrer or title stays under the 8 KB body
    // limit (the server keeps 2,048 characters of a URL, 500 of a title).
    send(settings.api + "/marketing/view", {
      v,
      s,
      u: location.href.slice(0, 3e3),
      t: document.title.slice(0, 500),
      r: (landing ? document.referrer : hereReferrer).slice(0, 3e3),
      a: (landing != location.href && landing.slice(0, 3e3)) || undefined,
      ...environment(),
      // Ad cookies: never with Global Privacy Control; in consent mode only after a grant.
      c: gpc ? {} : adCookies(),
    });
    counted = here;
    landing = "";
  };

  const track = (...[name, params, options]: Args) => {
    try {
      if (!allowed() || typeof name != "string") return;
      const { v, s } = touch(store, Date.now());
      const o = options || {};
      send(settings.api + "/marketing/act", {
        n: name,
        p: params && typeof params == "object" ? params : {},
        id: o.id,
        val: o.value,
        cur: o.currency,
        v,
        s,
        u: location.href.slice(0, 3e3),
      });
    } catch { /* fire and forget */ }
  };
  track.crm = 1 as const;

  /** A new choice: here (own) or in another tab of the site (seen through storage). */
  const decide = (next: Choice, own?: 1) => {
    const before = status();
    choice = next;
    if (own) store.set(CONSENT, next);
    if (next == "denied") erase(store);
    // A grant counts the current page once (a navigation still waiting for
    // its debounce included); nothing earlier is sent after the fact.
    if (own && next == "granted") {
      arrive();
      if (counted != here) view();
    }
    // Announced last, so a listener finds the ids a grant created.
    if (before != next) dispatchEvent(new CustomEvent("crm:consent", { detail: { status: next } }));
  };
  addEventListener("storage", (e) => {
    const next = store.get(CONSENT);
    if ((e.key == CONSENT || !e.key) && next != choice) {
      next == "granted" || next == "denied" ? decide(next) : choice = null;
    }
  });
  const consent = {
    grant: () => decide("granted", 1),
    deny: () => decide("denied", 1),
    status,
    required: settings.consentRequired,
    gpc,
    push(...items: unknown[]) {
      for (const item of items) {
        try {
          if (item === "grant") consent.grant();
          else if (item === "deny") consent.deny();
        } catch { /* never break the page */ }
      }
      return 0;
    },
  };
  const queue = {
    push(...items: unknown[]) {
      for (const item of items) if (Array.isArray(item)) track(...item as Args);
      return 0;
    },
  };

  // The arrays a page made before load keep working: a snippet may hold them.
  const early = (value: unknown, live: { push(...items: unknown[]): number }) => {
    if (!Array.isArray(value)) return [];
    const items = value.splice(0);
    value.push = live.push;
    return items;
  };
  const earlyConsent = early(w.crmConsent, consent);
  if (!Array.isArray(w.crmq)) w.crmq = [];
  const earlyEvents = early(w.crmq, queue);
  w.crmConsent = consent;
  w.crmTrack = track;
  consent.push(...earlyConsent);
  if (counted != here) view();
  queue.push(...earlyEvents);

  if (settings.spa != "off") {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A burst of navigations (redirects, replaceState after pushState) counts once.
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => arrive() && view(), 300);
    };
    for (const method of ["pushState", "replaceState"] as const) {
      const original = history[method];
      history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
        const result = original.apply(this, args);
        soon();
        return result;
      };
    }
    addEventListener("popstate", soon);
    if (settings.spa == "hash") addEventListener("hashchange", soon);
  }
}

try {
  start(self as Win & Window);
} catch { /* never break the page */ }
