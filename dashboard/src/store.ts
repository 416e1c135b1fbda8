/**
 * The page's state as signals, made by `createStore` from what it needs of
 * the browser (`BrowserEnv`), so the store and the containers that read it
 * render in unit tests without a browser. main.tsx makes the one store of the
 * page and passes it down by context (`StoreContext`, `useStore`).
 *
 * The view is mirrored in the URL: a change pushes a history entry, the back
 * button brings the view back. The store also knows whether the tab is signed
 * in, the site's declarations, and the refresh tick of the live numbers.
 *
 * Under a share link (GET /share/ID, `share` in the BrowserEnv) the page is
 * read-only: no report key is asked for, the API is read with x-share-link
 * (and x-share-password, kept in this tab once the reader gave it), and
 * `readOnly` tells the containers to offer nothing that changes the site. A
 * small hook loads an answer per key and keeps the last one shown while the
 * next loads.
 */
import { type Signal, signal } from "@preact/signals";
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { type Api, createApi, type Segment, SignedOut, type SiteInfo } from "./api.ts";
import { type Filter, isRealtime, SEGMENT, type View, withFilter } from "./state.ts";
import { searchOf, viewOf } from "./url.ts";

/** Where this tab keeps the report key (session storage: gone with the tab). */
export const KEY_STORE = "crm_report_key";

/** Where this tab keeps a share link's password, by link. */
export const sharePasswordStore = (id: string) => `crm_share_password:${id}`;

/** The share link the page serves, as GET /share/ID tells it (meta name="crm-share"). */
export interface ShareLink {
  id: string;
  /** ?embed=true: the page for an iframe, without sign-out and link controls. */
  embed: boolean;
  passwordRequired: boolean;
}

/** Live numbers refresh this often while the tab is visible. */
export const REFRESH_MS = 10_000;

/** What the store needs of the browser; browser.ts gives the real one. */
export interface BrowserEnv {
  /** The page's path and query string now. */
  location(): { pathname: string; search: string };
  /** A new history entry for the URL, or the current one replaced. */
  pushUrl(url: string): void;
  replaceUrl(url: string): void;
  /** The tab's session storage. */
  storage: Pick<Storage, "getItem" | "setItem" | "removeItem">;
  fetch: typeof fetch;
  /** Milliseconds since the epoch. */
  now(): number;
  /** The share link of the page, on GET /share/ID. */
  share?: ShareLink;
}

export interface Store {
  view: Signal<View>;
  /** Able to read the reports: a report key, or a share link (with its password when it has one). */
  signedIn: Signal<boolean>;
  signInMessage: Signal<string>;
  /** The page's share link, if it is one. */
  share?: ShareLink;
  /** Under a share link: nothing that changes the site (settings, saving) is offered. */
  readOnly: boolean;
  /** The share link was refused (unknown, revoked or expired): the page says so. */
  linkGone: Signal<boolean>;
  site: Signal<SiteInfo | undefined>;
  /** Counts refreshes of the live numbers; loads keyed by it run again. */
  tick: Signal<number>;
  /** When the live numbers were last asked for (ms), shown as "updated". */
  refreshedAt: Signal<number>;
  /** Loads in flight: the page is aria-busy while any is. */
  pending: Signal<number>;
  api: Api;
  /** Shows another view: a new history entry (or the current one replaced). */
  navigate(next: View, replace?: boolean): void;
  update(change: (current: View) => View, replace?: boolean): void;
  /** The view of the URL as it is now (after the back button). */
  followUrl(): void;
  /** Signs in with a report key, or under a share link with its password. */
  signIn(key: string): Promise<void>;
  signOut(message?: string): void;
  /** Signs out after the API refused the key, link or password, saying why. */
  refused(error: unknown, keyMessage: string): void;
  /** Asks for the live numbers again. */
  refresh(): void;
  /** Refreshes when the last refresh is at least REFRESH_MS old (a tab shown again). */
  refreshIfDue(): void;
  /** A key for useLoad from a body, with the live tick where the view is realtime. */
  keyOf(body: unknown, live?: boolean): string | undefined;
  /** The site's saved segments, by name (loaded by loadSegments). */
  segments: Signal<Segment[]>;
  /** What the last segment action was refused for, to be shown; "" when none. */
  segmentMessage: Signal<string>;
  loadSegments(): Promise<void>;
  /** Saves the view's filters as a segment of that name and applies it in their place. */
  saveSegment(name: string): Promise<void>;
  /** Applies a segment: its chip joins the filters. */
  applySegment(id: string): void;
  renameSegment(id: string, name: string): Promise<void>;
  /** Deletes a segment, and takes it out of the view's filters. */
  deleteSegment(id: string): Promise<void>;
}

/** The filters of a segment as the API takes them. */
const segmentFilters = (filters: Filter[]) => filters.filter((f) => f[1] !== SEGMENT);

/** The view without segment `id` in any of its segment filters. */
function withoutSegment(view: View, id: string): View {
  const filters = view.filters.flatMap((f): Filter[] => {
    if (f[1] !== SEGMENT) return [f];
    const ids = f[2].filter((v) => v !== id);
    return ids.length ? [[f[0], f[1], ids]] : [];
  });
  return { ...view, filters };
}

/** The API's headers of a share link: x-share-link, and x-share-password once given. */
function shareHeaders(share: ShareLink, password: string): Record<string, string> {
  return { "x-share-link": share.id, ...(password ? { "x-share-password": password } : {}) };
}

/** What the reader is told when the API refuses the link or its password. */
function shareRefusal(error: unknown): string {
  // The API's 429 while signing in: the link met too many wrong passwords this minute.
  if ((error as Error)?.message === "rate_limit_exceeded") {
    return "Too many wrong passwords: try again in a minute.";
  }
  if (!(error instanceof SignedOut)) return String(error);
  if (error.message === "password_required") return "That password is not right.";
  return "This link no longer works.";
}

export function createStore(env: BrowserEnv): Store {
  const share = env.share;
  const secret = share ? sharePasswordStore(share.id) : KEY_STORE;
  const storedKey = () => env.storage.getItem(secret) ?? "";
  const view = signal<View>(viewOf(env.location().search));
  // A link without a password, or whose password this tab holds, reads at once.
  const signedIn = signal(
    share ? !share.passwordRequired || storedKey() !== "" : storedKey() !== "",
  );
  const signInMessage = signal("");
  const linkGone = signal(false);
  const site = signal<SiteInfo | undefined>(undefined);
  const tick = signal(0);
  const refreshedAt = signal(env.now());
  const pending = signal(0);
  const api = createApi(
    () => share ? shareHeaders(share, storedKey()) : { "x-report-key": storedKey() },
    env.fetch,
  );

  const navigate = (next: View, replace = false) => {
    view.value = next;
    const { pathname, search } = env.location();
    const viewSearch = searchOf(next);
    // The embedded page stays embedded whatever the view.
    const embed = share?.embed ? `${viewSearch ? "&" : "?"}embed=true` : "";
    const url = `${pathname}${viewSearch}${embed}`;
    if (url === `${pathname}${search}`) return;
    if (replace) env.replaceUrl(url);
    else env.pushUrl(url);
  };
  const signOut = (message = "") => {
    env.storage.removeItem(secret);
    site.value = undefined;
    signedIn.value = false;
    signInMessage.value = message;
  };
  /** The API refused: under a share link, the link's own words; else a report key's. */
  const refused = (error: unknown, keyMessage: string) => {
    if (!share) return signOut(error instanceof SignedOut ? keyMessage : String(error));
    const gone = error instanceof SignedOut && error.message === "invalid_key";
    linkGone.value = gone;
    signOut(shareRefusal(error));
  };
  const refresh = () => {
    refreshedAt.value = env.now();
    tick.value++;
  };
  const segments = signal<Segment[]>([]);
  const segmentMessage = signal("");
  const byName = (list: Segment[]) => [...list].sort((a, b) => (a.name < b.name ? -1 : 1));
  /** Runs a segment action; a refusal is shown, a refused key signs out. */
  const segmentAction = async (action: () => Promise<void>) => {
    try {
      await action();
      segmentMessage.value = "";
    } catch (error) {
      if (error instanceof SignedOut) return refused(error, "That report key is not valid.");
      segmentMessage.value = (error as Error).message === "segment_exists"
        ? "A segment of that name exists."
        : String((error as Error).message ?? error);
    }
  };
  const navigateTo = (change: (current: View) => View) => navigate(change(view.value));
  return {
    view,
    signedIn,
    signInMessage,
    share,
    readOnly: share !== undefined,
    linkGone,
    site,
    tick,
    refreshedAt,
    pending,
    api,
    navigate,
    update: (change, replace = false) => navigate(change(view.value), replace),
    followUrl: () => {
      view.value = viewOf(env.location().search);
    },
    async signIn(key) {
      env.storage.setItem(secret, key);
      try {
        site.value = await api.site();
        signedIn.value = true;
        signInMessage.value = "";
      } catch (error) {
        refused(error, "That report key is not valid.");
      }
    },
    signOut,
    refused,
    refresh,
    refreshIfDue: () => {
      if (signedIn.value && env.now() - refreshedAt.value >= REFRESH_MS) refresh();
    },
    keyOf: (body, live = isRealtime(view.value)) => {
      if (body === undefined) return undefined;
      return JSON.stringify(body) + (live ? `#${tick.value}` : "");
    },
    segments,
    segmentMessage,
    loadSegments: () =>
      segmentAction(async () => {
        segments.value = byName(await api.segments());
      }),
    saveSegment: (name) =>
      segmentAction(async () => {
        const filters = segmentFilters(view.value.filters);
        const saved = await api.createSegment({ name, filters });
        segments.value = byName([...segments.value, saved]);
        navigateTo((v) => ({
          ...v,
          filters: [...v.filters.filter((f) => f[1] === SEGMENT), ["is", SEGMENT, [saved.id]]],
          more: undefined,
        }));
      }),
    applySegment: (id) => navigateTo((v) => withFilter(v, ["is", SEGMENT, [id]])),
    renameSegment: (id, name) =>
      segmentAction(async () => {
        const current = segments.value.find((s) => s.id === id);
        if (!current) return;
        const saved = await api.replaceSegment(id, { name, filters: current.filters });
        segments.value = byName(segments.value.map((s) => (s.id === id ? saved : s)));
      }),
    deleteSegment: (id) =>
      segmentAction(async () => {
        await api.deleteSegment(id);
        segments.value = segments.value.filter((s) => s.id !== id);
        navigateTo((v) => withoutSegment(v, id));
      }),
  };
}

export const StoreContext = createContext<Store | undefined>(undefined);

/** The page's store, from the nearest StoreContext provider. */
export function useStore(): Store {
  const store = useContext(StoreContext);
  if (!store) throw new Error("useStore outside a StoreContext provider");
  return store;
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
  const { pending, refused } = useStore();
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
        if (error instanceof SignedOut) {
          return refused(error, "That report key is not valid (any more).");
        }
        setState({ error: (error as Error).message, loading: false });
      },
    ).finally(() => pending.value--);
    return () => {
      current = false;
    };
  }, [key]);
  return state;
}
