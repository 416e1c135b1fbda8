/**
 * The reports API as the page reads it, from its own origin: POST
 * /stats/v1/query, POST /stats/v1/funnel and GET /stats/v1/site, with the
 * caller's credentials as headers (the report key from this tab's session
 * storage as x-report-key, or a share link as x-share-link with its
 * password; never in a URL). A 401 signs the page out.
 */
import type { components } from "../../clients/typescript/src/schema.ts";

/** The reports API's bodies and answers, as the generated client types them. */
type Schemas = components["schemas"];
export type QueryBody = Schemas["Query"];
export type FunnelBody = Schemas["Funnel"];
export type Answer = Schemas["QueryAnswer"];
export type ResultRow = Answer["results"][number];
/** With include.compare; null where the compared range has no such bucket. */
export type Comparison = NonNullable<Schemas["Comparison"]>;
export type FunnelAnswer = Schemas["FunnelAnswer"];
export type FunnelStepAnswer = FunnelAnswer["steps"][number];
export type SiteInfo = Schemas["Site"];
export type EventTypeInfo = SiteInfo["eventTypes"][number];
export type Segment = Schemas["Segment"];
export type SegmentBody = Schemas["SegmentBody"];

export const REPORT_KEY = /^rk_[0-9a-f]{48}$/;

/**
 * The key or share link was refused (missing, unknown, revoked or expired;
 * a share link's password missing or wrong): the page signs out. The
 * message is the API's (`invalid_key`, `password_required`).
 */
export class SignedOut extends Error {
  override name = "SignedOut";
}

export interface Api {
  query(body: QueryBody): Promise<Answer>;
  funnel(body: FunnelBody): Promise<FunnelAnswer>;
  site(): Promise<SiteInfo>;
  /** The site's segments, by name. */
  segments(): Promise<Segment[]>;
  createSegment(body: SegmentBody): Promise<Segment>;
  replaceSegment(id: string, body: SegmentBody): Promise<Segment>;
  deleteSegment(id: string): Promise<void>;
}

/**
 * The API with the headers `credentials` gives at each call. A request that
 * never got an answer (the network dropped, e.g. a laptop changing networks)
 * is sent once more; an answer, even an error, is never asked again.
 */
export function createApi(
  credentials: () => Record<string, string>,
  fetchFn: typeof fetch,
): Api {
  const send = async (
    path: string,
    body?: QueryBody | FunnelBody | SegmentBody,
    method = body ? "POST" : "GET",
  ): Promise<Response> => {
    const init = () => ({
      method,
      headers: {
        ...credentials(),
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    try {
      return await fetchFn(path, init());
    } catch {
      return await fetchFn(path, init());
    }
  };
  const call = async <T>(
    path: string,
    body?: QueryBody | FunnelBody | SegmentBody,
    method?: string,
  ): Promise<T> => {
    const response = await send(path, body, method);
    const json = await response.json().catch(() => ({}));
    if (response.status === 401) throw new SignedOut(json.message ?? "invalid_key");
    if (!response.ok) {
      throw new Error(`${json.message}${json.problem ? `: ${json.problem}` : ""}`);
    }
    return json as T;
  };
  return {
    query: (body) => call<Answer>("/stats/v1/query", body),
    funnel: (body) => call<FunnelAnswer>("/stats/v1/funnel", body),
    site: () => call<SiteInfo>("/stats/v1/site"),
    segments: async () => (await call<{ segments: Segment[] }>("/stats/v1/segments")).segments,
    createSegment: (body) => call<Segment>("/stats/v1/segments", body),
    replaceSegment: (id, body) =>
      call<Segment>(`/stats/v1/segments/${encodeURIComponent(id)}`, body, "PUT"),
    deleteSegment: async (id) => {
      await call<unknown>(`/stats/v1/segments/${encodeURIComponent(id)}`, undefined, "DELETE");
    },
  };
}
