/**
 * A typed client of the CRM gateway: content reads (with ETags, so a repeated
 * read costs a 304), server events and leads, reports and funnels. Its types
 * are generated from the gateway's OpenAPI document (schema.ts) and its calls
 * go through openapi-fetch, so it runs wherever `fetch` does: browsers, Deno,
 * Node 18 and later, workers.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.ts";

export type { components, paths };

type Schemas = components["schemas"];
export type Page = Schemas["Page"];
export type Section = Schemas["Section"];
export type Block = Schemas["Block"];
export type BlogWindow = Schemas["BlogWindow"];
export type Post = Schemas["Post"];
export type Languages = Schemas["Languages"];
export type PageIndex = Schemas["PageIndex"];
export type SectionIndex = Schemas["SectionIndex"];
export type Changes = Schemas["Changes"];
export type ServerEvent = Schemas["ServerEvent"];
export type EventAccepted = Schemas["EventAccepted"];
export type Lead = Schemas["Lead"];
export type LeadAccepted = Schemas["LeadAccepted"];
export type Query = Schemas["Query"];
export type QueryAnswer = Schemas["QueryAnswer"];
export type Funnel = Schemas["Funnel"];
export type FunnelAnswer = Schemas["FunnelAnswer"];
export type Site = Schemas["Site"];
export type ErrorBody = Schemas["Error"];

export interface CrmClientOptions {
  /** The gateway's address, e.g. `https://api.example.com`. */
  baseUrl: string;
  /** A site key (`pk_...`), for the content API. Safe in a browser. */
  siteKey?: string;
  /**
   * A preview key (`pv_...`): when set, content reads use it instead of the
   * site key, so drafts and scheduled posts are visible (each post with its
   * `status`) and no shared cache keeps the answers. Keep it off public pages.
   */
  previewKey?: string;
  /** A secret key (`sk_...`), for server events and leads. Never ship it to a browser. */
  secretKey?: string;
  /** A report key (`rk_...`), for reports and funnels. */
  reportKey?: string;
  /** The fetch to call (default: the global one), e.g. one with a timeout or a proxy. */
  fetch?: typeof globalThis.fetch;
  /**
   * Keep each content answer with its ETag and revalidate with If-None-Match:
   * a 304 then returns the kept answer (default true). Entries live as long
   * as the client; at most `maxEntries` (default 500) are kept.
   */
  contentCache?: boolean | { maxEntries?: number };
}

/** An answer other than success: the gateway's error body, status and request id. */
export class CrmApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody | undefined;
  /** The gateway's X-Request-Id, to quote when reporting a problem. */
  readonly requestId: string | null;
  /** Seconds to wait before trying again (503), when the gateway said. */
  readonly retryAfter: number | null;

  constructor(response: Response, body: ErrorBody | undefined) {
    super(`${response.status} ${body?.message ?? response.statusText}`);
    this.name = "CrmApiError";
    this.status = response.status;
    this.body = body;
    this.requestId = response.headers.get("x-request-id");
    const retry = response.headers.get("retry-after");
    this.retryAfter = retry === null ? null : Number(retry);
  }
}

/** A content answer: the value, its ETag, and whether it came from a 304. */
export interface ContentAnswer<T> {
  data: T;
  etag: string | null;
  /** True when the gateway answered 304 and the kept answer was returned. */
  notModified: boolean;
}

export interface LangOptions {
  /** Language codes; all active languages when absent. */
  lang?: string[];
  /** Fill a language a map lacks along the site's fallback chains (`fallback=true`). */
  fallback?: boolean;
}

export interface ContentOptions extends LangOptions {
  /**
   * An ETag held from an earlier answer: a 304 then resolves to
   * `{ notModified: true, data: undefined }` unless the client kept the answer.
   */
  ifNoneMatch?: string;
}

interface Kept {
  etag: string;
  data: unknown;
}

type Outcome = { data?: unknown; error?: unknown; response: Response };

export interface CrmClient {
  /** The openapi-fetch client, typed by every path of the document. */
  readonly api: Client<paths>;
  page(
    marker: string,
    options?: ContentOptions & { empty?: boolean },
  ): Promise<ContentAnswer<Page>>;
  section(
    marker: string,
    options?: ContentOptions & { empty?: boolean },
  ): Promise<ContentAnswer<Section>>;
  block(
    marker: string,
    options?: ContentOptions & { section?: string },
  ): Promise<ContentAnswer<Block>>;
  blog(
    options?: ContentOptions & { limit?: number; offset?: number; page?: number; perPage?: number },
  ): Promise<ContentAnswer<BlogWindow>>;
  post(slug: string, options?: ContentOptions): Promise<ContentAnswer<Post>>;
  langs(options?: Pick<ContentOptions, "ifNoneMatch">): Promise<ContentAnswer<Languages>>;
  /** Every page in manifest order, with when each last changed. */
  listPages(options?: Pick<ContentOptions, "ifNoneMatch">): Promise<ContentAnswer<PageIndex>>;
  /** Every section in manifest order, with its page and when it last changed. */
  listSections(
    options?: Pick<ContentOptions, "ifNoneMatch">,
  ): Promise<ContentAnswer<SectionIndex>>;
  /**
   * Everything the API answers (no `since`), or what changed since the
   * `cursor` of an earlier answer: keep each answer's cursor for the next call.
   */
  changes(
    options?: Pick<ContentOptions, "ifNoneMatch"> & { since?: string },
  ): Promise<ContentAnswer<Changes>>;
  /** A custom event from a server (secret key). */
  event(event: ServerEvent): Promise<EventAccepted>;
  /** A lead from a server (secret key). */
  lead(lead: Lead): Promise<LeadAccepted>;
  /** A reports query (report key). */
  query(query: Query): Promise<QueryAnswer>;
  /** A funnel (report key). */
  funnel(funnel: Funnel): Promise<FunnelAnswer>;
  /** The site's time zone and declared event types (report key). */
  site(): Promise<Site>;
}

function need(key: string | undefined, name: string): string {
  if (!key) throw new Error(`this call needs the client's ${name}`);
  return key;
}

/** The data of a successful answer, or a CrmApiError. */
function dataOf<T>(outcome: Outcome): T {
  if (outcome.response.ok && outcome.error === undefined) return outcome.data as T;
  throw new CrmApiError(outcome.response, outcome.error as ErrorBody | undefined);
}

export function createCrmClient(options: CrmClientOptions): CrmClient {
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ""),
    // Read at each call, so a fetch replaced later (tests, instrumentation) is used.
    fetch: (request: Request) => (options.fetch ?? globalThis.fetch)(request),
  });
  const cacheOption = options.contentCache ?? true;
  const maxEntries = typeof cacheOption === "object" ? cacheOption.maxEntries ?? 500 : 500;
  const kept = new Map<string, Kept>();

  const siteHeaders = () => ({
    "x-crm-key": options.previewKey ?? need(options.siteKey, "siteKey"),
  });
  const fallback = (o: LangOptions) => (o.fallback ? "true" : undefined);
  const secretHeaders = () => ({ "x-event-key": need(options.secretKey, "secretKey") });
  const reportHeaders = () => ({ "x-report-key": need(options.reportKey, "reportKey") });

  /** One content read: If-None-Match from the caller or the kept answer, 304 resolved. */
  async function read<T>(
    key: string,
    ifNoneMatch: string | undefined,
    call: (headers: Record<string, string>) => Promise<Outcome>,
  ): Promise<ContentAnswer<T>> {
    const known = cacheOption ? kept.get(key) : undefined;
    const tag = ifNoneMatch ?? known?.etag;
    const outcome = await call({ ...siteHeaders(), ...(tag ? { "if-none-match": tag } : {}) });
    const etag = outcome.response.headers.get("etag");
    if (outcome.response.status === 304) {
      const data = known && known.etag === tag ? known.data : undefined;
      return { data: data as T, etag: etag ?? tag ?? null, notModified: true };
    }
    const data = dataOf<T>(outcome);
    if (cacheOption && etag) {
      kept.delete(key);
      if (kept.size >= maxEntries) kept.delete(kept.keys().next().value!);
      kept.set(key, { etag, data });
    }
    return { data, etag, notModified: false };
  }

  const cacheKey = (path: string, query: Record<string, unknown>) =>
    `${path}?${JSON.stringify(query)}`;

  return {
    api,
    page(marker, o = {}) {
      const query = {
        lang: o.lang,
        fallback: fallback(o),
        empty: o.empty === undefined ? undefined : String(o.empty),
      };
      return read<Page>(
        cacheKey(`/pages/${marker}`, query),
        o.ifNoneMatch,
        (header) =>
          api.GET("/content/v1/pages/{marker}", {
            params: { path: { marker }, query },
            headers: header,
          }),
      );
    },
    section(marker, o = {}) {
      const query = {
        lang: o.lang,
        fallback: fallback(o),
        empty: o.empty === undefined ? undefined : String(o.empty),
      };
      return read<Section>(
        cacheKey(`/sections/${marker}`, query),
        o.ifNoneMatch,
        (header) =>
          api.GET("/content/v1/sections/{marker}", {
            params: { path: { marker }, query },
            headers: header,
          }),
      );
    },
    block(marker, o = {}) {
      const query = { lang: o.lang, fallback: fallback(o), section: o.section };
      return read<Block>(
        cacheKey(`/blocks/${marker}`, query),
        o.ifNoneMatch,
        (header) =>
          api.GET("/content/v1/blocks/{marker}", {
            params: { path: { marker }, query },
            headers: header,
          }),
      );
    },
    blog(o = {}) {
      const query = {
        lang: o.lang,
        fallback: fallback(o),
        limit: o.limit,
        offset: o.offset,
        page: o.page,
        perPage: o.perPage,
      };
      return read<BlogWindow>(
        cacheKey("/blog", query),
        o.ifNoneMatch,
        (header) => api.GET("/content/v1/blog", { params: { query }, headers: header }),
      );
    },
    post(slug, o = {}) {
      const query = { lang: o.lang, fallback: fallback(o) };
      return read<{ post: Post }>(
        cacheKey(`/blog/${slug}`, query),
        o.ifNoneMatch,
        (header) =>
          api.GET("/content/v1/blog/{slug}", {
            params: { path: { slug }, query },
            headers: header,
          }),
      ).then((answer) => ({ ...answer, data: answer.data?.post as Post }));
    },
    langs(o = {}) {
      return read<Languages>(
        cacheKey("/langs", {}),
        o.ifNoneMatch,
        (header) => api.GET("/content/v1/langs", { headers: header }),
      );
    },
    listPages(o = {}) {
      return read<PageIndex>(
        cacheKey("/pages", {}),
        o.ifNoneMatch,
        (header) => api.GET("/content/v1/pages", { headers: header }),
      );
    },
    listSections(o = {}) {
      return read<SectionIndex>(
        cacheKey("/sections", {}),
        o.ifNoneMatch,
        (header) => api.GET("/content/v1/sections", { headers: header }),
      );
    },
    changes(o = {}) {
      const query = { since: o.since };
      return read<Changes>(
        cacheKey("/changes", query),
        o.ifNoneMatch,
        (header) => api.GET("/content/v1/changes", { params: { query }, headers: header }),
      );
    },
    async event(event) {
      return dataOf(await api.POST("/marketing/event", { body: event, headers: secretHeaders() }));
    },
    async lead(lead) {
      return dataOf(await api.POST("/marketing/lead", { body: lead, headers: secretHeaders() }));
    },
    async query(query) {
      return dataOf(await api.POST("/stats/v1/query", { body: query, headers: reportHeaders() }));
    },
    async funnel(funnel) {
      return dataOf(await api.POST("/stats/v1/funnel", { body: funnel, headers: reportHeaders() }));
    },
    async site() {
      return dataOf(await api.GET("/stats/v1/site", { headers: reportHeaders() }));
    },
  };
}
