/// <reference lib="dom" />
/**
 * The page's state as signals: the view (mirrored in the URL: a change
 * pushes a history entry, the back button brings the view back), whether the
 * tab is signed in, the site's declarations, and the refresh tick of the live
 * numbers. A small hook loads an answer per key and keeps the last one shown
 * while the next loads.
 */
import { signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { api, KEY_STORE, SignedOut, type SiteInfo, storedKey } from "./api.ts";
import { isRealtime, type View } from "./state.ts";
import { searchOf, viewOf } from "./url.ts";

export const view = signal<View>(viewOf(location.search));
export const signedIn = signal(storedKey() !== "");
export const signInMessage = signal("");
export const site = signal<SiteInfo | undefined>(undefined);
/** Counts refreshes of the live numbers; loads keyed by it run again. */
export const tick = signal(0);
/** When the live numbers were last asked for (ms), shown as "updated". */
export const refreshedAt = signal(Date.now());

/** Loads in flight: the page is aria-busy while any is. */
export const pending = signal(0);

/** Live numbers refresh this often while the tab is visible. */
export const REFRESH_MS = 10_000;

/** Shows another view: a new history entry (or the current one replaced). */
export function navigate(next: View, replace = false): void {
  view.value = next;
  const url = `${location.pathname}${searchOf(next)}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
}

export function update(change: (current: View) => View, replace = false): void {
  navigate(change(view.value), replace);
}

export function signOut(message = ""): void {
  sessionStorage.removeItem(KEY_STORE);
  site.value = undefined;
  signedIn.value = false;
  signInMessage.value = message;
}

export async function signIn(key: string): Promise<void> {
  sessionStorage.setItem(KEY_STORE, key);
  try {
    site.value = await api.site();
    signedIn.value = true;
    signInMessage.value = "";
  } catch (error) {
    signOut(error instanceof SignedOut ? "That report key is not valid." : String(error));
  }
}

function refresh(): void {
  refreshedAt.value = Date.now();
  tick.value++;
}

/**
 * Starts the page's listeners: the back button, and the refresh of the live
 * numbers every REFRESH_MS while the tab is visible. A hidden tab asks for
 * nothing; when it shows again, it refreshes at once if a refresh is due.
 */
export function startListening(): void {
  addEventListener("popstate", () => {
    view.value = viewOf(location.search);
  });
  setInterval(() => {
    if (!document.hidden && signedIn.value) refresh();
  }, REFRESH_MS);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && signedIn.value && Date.now() - refreshedAt.value >= REFRESH_MS) {
      refresh();
    }
  });
}

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
}

/**
 * Loads `load()` whenever `key` changes (nothing while it is undefined).
 * The previous answer stays until the next arrives; an answer that arrives
 * after a newer key was asked for is dropped. A refused key signs out.
 */
export function useLoad<T>(key: string | undefined, load: () => Promise<T>): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ loading: key !== undefined });
  useEffect(() => {
    if (key === undefined) {
      setState({ loading: false });
      return;
    }
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    pending.value++;
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error) => {
        if (!current) return;
        if (error instanceof SignedOut) return signOut("That report key is not valid (any more).");
        setState({ error: (error as Error).message, loading: false });
      },
    ).finally(() => pending.value--);
    return () => {
      current = false;
    };
  }, [key]);
  return state;
}

/** A key for useLoad from a body, with the live tick where the view is realtime. */
export function keyOf(body: unknown, live = isRealtime(view.value)): string | undefined {
  if (body === undefined) return undefined;
  return JSON.stringify(body) + (live ? `#${tick.value}` : "");
}
