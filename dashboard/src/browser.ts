/// <reference lib="dom" />
/**
 * The store's browser: the page's location and history, this tab's session
 * storage, fetch and the clock; and the page's listeners (the back button,
 * the live numbers' refresh every REFRESH_MS while the tab is visible: a
 * hidden tab asks for nothing and refreshes at once when shown again if a
 * refresh is due). Only main.tsx uses it; tests give createStore their own.
 */
import { type BrowserEnv, REFRESH_MS, type ShareLink, type Store } from "./store.ts";

/** The page's share link, as GET /share/ID names it (meta name="crm-share"), if any. */
function shareOfPage(): ShareLink | undefined {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="crm-share"]');
  if (!meta) return undefined;
  const { id, embed, passwordRequired } = JSON.parse(meta.content);
  return { id: String(id), embed: embed === true, passwordRequired: passwordRequired === true };
}

/**
 * This tab's session storage, or one in memory where the browser denies it
 * (an embedded page, a third party to its parent, while third-party storage
 * is blocked): the page then forgets a password on reload, and works.
 */
function tabStorage(): BrowserEnv["storage"] {
  try {
    const storage = sessionStorage;
    storage.getItem("");
    return storage;
  } catch {
    const memory = new Map<string, string>();
    return {
      getItem: (key) => memory.get(key) ?? null,
      setItem: (key, value) => void memory.set(key, value),
      removeItem: (key) => void memory.delete(key),
    };
  }
}

export function browserEnv(): BrowserEnv {
  return {
    share: shareOfPage(),
    location: () => ({ pathname: location.pathname, search: location.search }),
    pushUrl: (url) => history.pushState(null, "", url),
    replaceUrl: (url) => history.replaceState(null, "", url),
    storage: tabStorage(),
    fetch: (input, init) => fetch(input, init),
    now: () => Date.now(),
  };
}

export function startListening(store: Store): void {
  addEventListener("popstate", () => store.followUrl());
  setInterval(() => {
    if (!document.hidden && store.signedIn.value) store.refresh();
  }, REFRESH_MS);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) store.refreshIfDue();
  });
}
