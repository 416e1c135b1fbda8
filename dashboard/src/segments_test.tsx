/**
 * Segments in the dashboard, without a browser: a store made from a
 * stand-in BrowserEnv whose fetch answers as /stats/v1/segments does.
 */
import { describe, expect, it } from "vitest";
import { render } from "preact-render-to-string";
import { type BrowserEnv, createStore, KEY_STORE, StoreContext } from "./store.ts";
import { SegmentMenu } from "./filters.tsx";
import { filterLabel } from "./chips.tsx";
import { searchOf, viewOf } from "./url.ts";
import type { Segment } from "./api.ts";

const KEY = `rk_${"a".repeat(48)}`;
const GERMANY: Segment = {
  id: `seg_${"1".repeat(24)}`,
  name: "Germany",
  filters: [["is", "visit:country", ["DE"]]],
};
const AUSTRIA: Segment = {
  id: `seg_${"2".repeat(24)}`,
  name: "Austria",
  filters: [["is", "visit:country", ["AT"]]],
};
const NEW_ID = `seg_${"3".repeat(24)}`;

interface Request {
  method: string;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
}

/** The segments API in memory, as the gateway answers it. */
function stand(search = "", share?: BrowserEnv["share"]) {
  const state = { pathname: "/dashboard/", search };
  const pushed: string[] = [];
  const storage = new Map<string, string>([[KEY_STORE, KEY]]);
  const requests: Request[] = [];
  let stored = [GERMANY, AUSTRIA];
  const answer = (request: Request): Response => {
    const id = request.url.split("/")[4];
    const body = request.body as { name: string; filters: unknown } | undefined;
    if (request.method === "GET") return Response.json({ segments: stored });
    if (request.method === "POST") {
      if (stored.some((s) => s.name === body!.name)) {
        return Response.json({ message: "segment_exists" }, { status: 409 });
      }
      const saved = { id: NEW_ID, ...body! } as Segment;
      stored = [...stored, saved];
      return Response.json(saved, { status: 201 });
    }
    if (request.method === "PUT") {
      const saved = { id, ...body! } as Segment;
      stored = stored.map((s) => (s.id === id ? saved : s));
      return Response.json(saved);
    }
    stored = stored.filter((s) => s.id !== id);
    return new Response(null, { status: 204 });
  };
  const env: BrowserEnv = {
    location: () => ({ ...state }),
    pushUrl: (url) => {
      pushed.push(url);
      state.search = url.slice(state.pathname.length);
    },
    replaceUrl: (url) => void (state.search = url.slice(state.pathname.length)),
    storage: {
      getItem: (k) => storage.get(k) ?? null,
      setItem: (k, v) => void storage.set(k, v),
      removeItem: (k) => void storage.delete(k),
    },
    fetch: (input, init) => {
      const request: Request = {
        method: init?.method ?? "GET",
        url: String(input),
        headers: init?.headers as Record<string, string>,
        ...(init?.body ? { body: JSON.parse(String(init.body)) } : {}),
      };
      requests.push(request);
      return Promise.resolve(answer(request));
    },
    now: () => 1_000_000,
    ...(share ? { share } : {}),
  };
  return { env, pushed, requests };
}

describe("segments in the dashboard's store", () => {
  it("lists the site's segments by name with the report key", async () => {
    const s = stand();
    const store = createStore(s.env);
    await store.loadSegments();
    expect(store.segments.value.map((x) => x.name)).toEqual(["Austria", "Germany"]);
    expect(s.requests[0]).toMatchObject({
      method: "GET",
      url: "/stats/v1/segments",
      headers: { "x-report-key": KEY },
    });
  });

  it("saves the current filters as a segment and applies it as a chip in their place", async () => {
    const s = stand("?f=is,visit:device,mobile&f=is,segment," + AUSTRIA.id);
    const store = createStore(s.env);
    await store.loadSegments();
    await store.saveSegment("Mobile");
    expect(s.requests.at(-1)).toMatchObject({
      method: "POST",
      url: "/stats/v1/segments",
      body: { name: "Mobile", filters: [["is", "visit:device", ["mobile"]]] },
    });
    expect(store.view.value.filters).toEqual([
      ["is", "segment", [AUSTRIA.id]],
      ["is", "segment", [NEW_ID]],
    ]);
    expect(s.pushed.at(-1)).toContain(`f=is%2Csegment%2C${NEW_ID}`);
    expect(store.segments.value.map((x) => x.name)).toEqual(["Austria", "Germany", "Mobile"]);
    expect(store.segmentMessage.value).toBe("");
  });

  it("says so when the name is taken, and changes nothing", async () => {
    const s = stand("?f=is,visit:device,mobile");
    const store = createStore(s.env);
    await store.saveSegment("Germany");
    expect(store.segmentMessage.value).toMatch(/exists/);
    expect(store.view.value.filters).toEqual([["is", "visit:device", ["mobile"]]]);
  });

  it("applies, renames and deletes a segment, its chip following", async () => {
    const s = stand();
    const store = createStore(s.env);
    await store.loadSegments();
    store.applySegment(GERMANY.id);
    expect(store.view.value.filters).toEqual([["is", "segment", [GERMANY.id]]]);
    const names = new Map(store.segments.value.map((x) => [x.id, x.name]));
    expect(filterLabel(store.view.value.filters[0], names)).toBe("Segment Germany");

    await store.renameSegment(GERMANY.id, "Deutschland");
    expect(s.requests.at(-1)).toMatchObject({
      method: "PUT",
      url: `/stats/v1/segments/${GERMANY.id}`,
      body: { name: "Deutschland", filters: GERMANY.filters },
    });
    expect(store.segments.value.map((x) => x.name)).toEqual(["Austria", "Deutschland"]);

    await store.deleteSegment(GERMANY.id);
    expect(s.requests.at(-1)).toMatchObject({
      method: "DELETE",
      url: `/stats/v1/segments/${GERMANY.id}`,
    });
    expect(store.segments.value.map((x) => x.name)).toEqual(["Austria"]);
    expect(store.view.value.filters).toEqual([]);
  });

  it("keeps an applied segment in the URL, and refuses other operators on it", () => {
    const view = viewOf(`?f=is_not,segment,${GERMANY.id}&f=contains,segment,x`);
    expect(view.filters).toEqual([["is_not", "segment", [GERMANY.id]]]);
    expect(viewOf(searchOf(view)).filters).toEqual(view.filters);
    expect(filterLabel(view.filters[0])).toBe(`Not segment ${GERMANY.id}`);
  });
});

describe("the segments menu", () => {
  const menu = (store: ReturnType<typeof createStore>) =>
    render(
      <StoreContext.Provider value={store}>
        <SegmentMenu />
      </StoreContext.Provider>,
    );

  it("offers to apply each segment and, with filters to save, to save them", async () => {
    const store = createStore(stand("?f=is,visit:device,mobile").env);
    await store.loadSegments();
    const html = menu(store);
    expect(html).toContain('data-testid="segment-apply"');
    expect(html).toContain(">Austria</option>");
    expect(html).toContain('data-testid="segment-save"');
    expect(html).toContain("Rename segment Germany");
  });

  it("under a share link only lists them to apply", async () => {
    const store = createStore(
      stand("?f=is,visit:device,mobile", {
        id: `sh_${"0".repeat(32)}`,
        embed: false,
        passwordRequired: false,
      })
        .env,
    );
    await store.loadSegments();
    const html = menu(store);
    expect(html).toContain('data-testid="segment-apply"');
    expect(html).not.toContain('data-testid="segment-save"');
    expect(html).not.toContain("Rename segment");
  });
});
