/**
 * The dashboard under a share link (GET /share/ID), without a browser: a
 * store made from a stand-in BrowserEnv naming the link, as browser.ts does
 * from the page's meta element.
 */
import { describe, expect, it } from "vitest";
import { render } from "preact-render-to-string";
import { App } from "./app.tsx";
import {
  type BrowserEnv,
  createStore,
  KEY_STORE,
  type ShareLink,
  sharePasswordStore,
  StoreContext,
} from "./store.ts";
import type { SiteInfo } from "./api.ts";

const ID = `sh_${"b".repeat(32)}`;
const SITE: SiteInfo = { siteId: "demo", timeZone: "Europe/Berlin", eventTypes: [] };

function stand(share: Partial<ShareLink>, answer: () => Response = () => Response.json(SITE)) {
  const state = { pathname: `/share/${ID}`, search: share.embed ? "?embed=true" : "" };
  const pushed: string[] = [];
  const storage = new Map<string, string>();
  const requests: { url: string; headers: Record<string, string> }[] = [];
  const env: BrowserEnv = {
    location: () => ({ ...state }),
    pushUrl: (url) => {
      pushed.push(url);
      state.search = url.slice(state.pathname.length);
    },
    replaceUrl: () => {},
    storage: {
      getItem: (k) => storage.get(k) ?? null,
      setItem: (k, v) => void storage.set(k, v),
      removeItem: (k) => void storage.delete(k),
    },
    fetch: (input, init) => {
      requests.push({ url: String(input), headers: init?.headers as Record<string, string> });
      return Promise.resolve(answer());
    },
    now: () => 1_000_000,
    share: { id: ID, embed: false, passwordRequired: false, ...share },
  };
  return { env, pushed, storage, requests };
}

function page(store: ReturnType<typeof createStore>): string {
  return render(
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>,
  );
}

describe("the dashboard under a share link", () => {
  it("reads at once with x-share-link, asks for no key and is read-only", async () => {
    const s = stand({});
    s.storage.set(KEY_STORE, `rk_${"a".repeat(48)}`);
    const store = createStore(s.env);
    expect(store.signedIn.value).toBe(true);
    expect(store.readOnly).toBe(true);
    await store.api.site();
    // The link alone: never a report key the tab may hold from elsewhere.
    expect(s.requests[0].headers).toEqual({ "x-share-link": ID });
    store.site.value = SITE;
    const html = page(store);
    expect(html).not.toContain('id="signin-form"');
    expect(html).not.toContain('data-testid="signout"');
    expect(html).toContain('data-testid="copy-link"');
    expect(html).toContain('class="shared"');
  });

  it("embedded: no sign-out, no link controls, and the view keeps embed=true", () => {
    const s = stand({ embed: true, passwordRequired: true });
    s.storage.set(sharePasswordStore(ID), "pw");
    const store = createStore(s.env);
    store.site.value = SITE;
    const html = page(store);
    expect(html).not.toContain('data-testid="signout"');
    expect(html).not.toContain('data-testid="copy-link"');
    expect(html).toContain('class="shared embedded"');
    store.update((v) => ({ ...v, range: "7d" }));
    expect(s.pushed).toEqual([`/share/${ID}?range=7d&embed=true`]);
  });

  it("asks for the password first and sends it once given", async () => {
    const s = stand({ passwordRequired: true });
    const store = createStore(s.env);
    expect(store.signedIn.value).toBe(false);
    const form = page(store);
    expect(form).toContain('id="share-password-form"');
    expect(form).toContain('type="password"');
    expect(form).not.toContain('id="signin-form"');
    await store.signIn("open sesame");
    expect(store.signedIn.value).toBe(true);
    expect(store.site.value).toEqual(SITE);
    expect(s.requests[0].headers).toEqual({
      "x-share-link": ID,
      "x-share-password": "open sesame",
    });
    expect(s.storage.get(sharePasswordStore(ID))).toBe("open sesame");
    // A password link may forget its password: sign-out is there (not when embedded).
    expect(page(store)).toContain('data-testid="signout"');
  });

  it("says a wrong password, and too many, and forgets it", async () => {
    let answer = Response.json({ message: "password_required" }, { status: 401 });
    const s = stand({ passwordRequired: true }, () => answer);
    const store = createStore(s.env);
    await store.signIn("guess");
    expect(store.signedIn.value).toBe(false);
    expect(store.signInMessage.value).toMatch(/password is not right/);
    expect(s.storage.has(sharePasswordStore(ID))).toBe(false);
    answer = Response.json({ message: "rate_limit_exceeded" }, { status: 429 });
    await store.signIn("guess again");
    expect(store.signInMessage.value).toMatch(/Too many wrong passwords/);
    expect(store.linkGone.value).toBe(false);
  });

  it("says the link no longer works when the API refuses it", async () => {
    const s = stand({}, () => Response.json({ message: "invalid_key" }, { status: 401 }));
    const store = createStore(s.env);
    await store.signIn("");
    expect(store.linkGone.value).toBe(true);
    const html = page(store);
    expect(html).toContain("This link no longer works");
    expect(html).not.toContain('id="signin-form"');
  });

  it("is not read-only on the reports page", () => {
    const s = stand({});
    const store = createStore({ ...s.env, share: undefined });
    expect(store.readOnly).toBe(false);
    expect(store.linkGone.value).toBe(false);
  });
});
