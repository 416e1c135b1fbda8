/**
 * The store and the containers that read it, without a browser: a store made
 * from a stand-in BrowserEnv, passed by context as main.tsx passes the real one.
 */
import { describe, expect, it } from "vitest";
import { render } from "preact-render-to-string";
import { App } from "./app.tsx";
import { type BrowserEnv, createStore, KEY_STORE, REFRESH_MS, StoreContext } from "./store.ts";
import type { SiteInfo } from "./api.ts";

const KEY = `rk_${"a".repeat(48)}`;
const SITE: SiteInfo = { siteId: "demo", timeZone: "Europe/Berlin", eventTypes: [] };

interface Stand {
  env: BrowserEnv;
  urls: { push: string[]; replace: string[] };
  storage: Map<string, string>;
  requests: { url: string; headers: Record<string, string> }[];
  setSearch(search: string): void;
  clock: { now: number };
}

function stand(search = "", answer: () => Response = () => Response.json(SITE)): Stand {
  const state = { pathname: "/dashboard/", search };
  const urls = { push: [] as string[], replace: [] as string[] };
  const storage = new Map<string, string>();
  const requests: Stand["requests"] = [];
  const clock = { now: 1_000_000 };
  const go = (list: string[]) => (url: string) => {
    list.push(url);
    state.search = url.slice(state.pathname.length);
  };
  const env: BrowserEnv = {
    location: () => ({ ...state }),
    pushUrl: go(urls.push),
    replaceUrl: go(urls.replace),
    storage: {
      getItem: (k) => storage.get(k) ?? null,
      setItem: (k, v) => void storage.set(k, v),
      removeItem: (k) => void storage.delete(k),
    },
    fetch: (input, init) => {
      requests.push({ url: String(input), headers: init?.headers as Record<string, string> });
      return Promise.resolve(answer());
    },
    now: () => clock.now,
  };
  return { env, urls, storage, requests, setSearch: (s) => (state.search = s), clock };
}

function page(store: ReturnType<typeof createStore>): string {
  return render(
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>,
  );
}

describe("the dashboard's store", () => {
  it("starts from the URL's view and mirrors changes into history, replacing on request", () => {
    const s = stand("?range=7d");
    const store = createStore(s.env);
    expect(store.view.value.range).toBe("7d");
    store.update((v) => ({ ...v, filters: [["is", "visit:country", ["DE", "AT"]]] }));
    expect(s.urls.push).toEqual(["/dashboard/?range=7d&f=is%2Cvisit%3Acountry%2CDE%7CAT"]);
    store.update((v) => ({ ...v, metric: "pageviews" }), true);
    expect(s.urls.replace).toHaveLength(1);
    // The same view again writes no entry.
    store.update((v) => v);
    expect(s.urls.push).toHaveLength(1);
    // The back button: the view follows the URL.
    s.setSearch("?range=today");
    store.followUrl();
    expect(store.view.value.range).toBe("today");
    expect(store.view.value.filters).toEqual([]);
  });

  it("signs in with a key the API accepts, sends it as x-report-key, and forgets it on sign-out", async () => {
    const s = stand();
    const store = createStore(s.env);
    expect(store.signedIn.value).toBe(false);
    await store.signIn(KEY);
    expect(store.signedIn.value).toBe(true);
    expect(store.site.value).toEqual(SITE);
    expect(s.requests[0]).toMatchObject({
      url: "/stats/v1/site",
      headers: { "x-report-key": KEY },
    });
    store.signOut("bye");
    expect(s.storage.has(KEY_STORE)).toBe(false);
    expect(store.signInMessage.value).toBe("bye");
  });

  it("stays signed out with a message when the key is refused", async () => {
    const s = stand("", () => Response.json({ message: "invalid_key" }, { status: 401 }));
    const store = createStore(s.env);
    await store.signIn(KEY);
    expect(store.signedIn.value).toBe(false);
    expect(s.storage.has(KEY_STORE)).toBe(false);
    expect(store.signInMessage.value).toMatch(/not valid/);
  });

  it("refreshes the live numbers only when a refresh is due", () => {
    const s = stand();
    s.storage.set(KEY_STORE, KEY);
    const store = createStore(s.env);
    store.refreshIfDue();
    expect(store.tick.value).toBe(0);
    s.clock.now += REFRESH_MS;
    store.refreshIfDue();
    expect(store.tick.value).toBe(1);
    expect(store.keyOf({ a: 1 }, true)).toBe('{"a":1}#1');
    expect(store.keyOf({ a: 1 }, false)).toBe('{"a":1}');
  });
});

describe("the page rendered from a store", () => {
  it("asks for a key when the tab holds none", () => {
    const html = page(createStore(stand().env));
    expect(html).toContain('id="signin-form"');
    expect(html).not.toContain('data-testid="signout"');
  });

  it("shows the site, the view's range and its filters once signed in", () => {
    const s = stand("?range=7d&f=is,visit:country,DE|AT");
    s.storage.set(KEY_STORE, KEY);
    const store = createStore(s.env);
    store.site.value = SITE;
    const html = page(store);
    expect(html).not.toContain('id="signin-form"');
    expect(html).toContain("Europe/Berlin");
    expect(html).toContain('<option selected value="7d">');
    expect(html).toContain("Country is Germany or Austria");
  });
});
