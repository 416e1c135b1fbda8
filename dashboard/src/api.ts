/**
 * The reports API as the page reads it, from its own origin: POST
 * /stats/v1/query, POST /stats/v1/funnel and GET /stats/v1/site, with the
 * report key from this tab's session storage as the x-report-key header
 * (never in a URL). A 401 signs the page out.
 */
import type { Change, Metric } from "./format.ts";
import type { Step } from "./state.ts";
import type { Body } from "./queries.ts";

export const KEY_STORE = "crm_report_key";
export const REPORT_KEY = /^rk_[0-9a-f]{48}$/;

export interface Comparison {
  dimensions: (string | null)[];
  metrics: Metric[];
  change: Change[];
}

export interface ResultRow {
  dimensions: (string | null)[];
  metrics: Metric[];
  /** With include.compare; null where the compared range has no such bucket. */
  comparison?: Comparison | null;
}

export interface Answer {
  results: ResultRow[];
  totals?: Metric[];
  totalsComparison?: Comparison | null;
  meta: {
    timeZone: string;
    dateRange: [string, string];
    totalRows: number;
    compareDateRange?: [string, string] | null;
    timeLabels?: string[];
  };
  /** The query as understood. */
  query?: { metrics: string[]; dimensions: string[] };
}

export interface FunnelStepAnswer {
  step: Step;
  visitors: number;
  visits: number;
  conversionRate: number;
  dropOff: number;
}

export interface FunnelAnswer {
  steps: FunnelStepAnswer[];
  meta: { timeZone: string; dateRange: [string, string] };
}

export interface EventTypeInfo {
  name: string;
  title: string;
  status: "active" | "archived";
  params: { key: string; type: string }[];
  bringsRevenue: boolean;
  currency: string | null;
}

export interface SiteInfo {
  siteId: string;
  timeZone: string | null;
  eventTypes: EventTypeInfo[];
}

/** The key was refused (missing, unknown or revoked): the page signs out. */
export class SignedOut extends Error {
  override name = "SignedOut";
}

export function storedKey(): string {
  return sessionStorage.getItem(KEY_STORE) ?? "";
}

/**
 * A request; one that never got an answer (the network dropped, e.g. a
 * laptop changing networks) is sent once more. An answer, even an error, is
 * never asked again.
 */
async function send(path: string, body?: Body): Promise<Response> {
  const init = () => ({
    method: body ? "POST" : "GET",
    headers: {
      "x-report-key": storedKey(),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  try {
    return await fetch(path, init());
  } catch {
    return await fetch(path, init());
  }
}

async function call<T>(path: string, body?: Body): Promise<T> {
  const response = await send(path, body);
  if (response.status === 401) throw new SignedOut("invalid_key");
  const json = await response.json();
  if (!response.ok) {
    throw new Error(`${json.message}${json.problem ? `: ${json.problem}` : ""}`);
  }
  return json as T;
}

export const api = {
  query: (body: Body) => call<Answer>("/stats/v1/query", body),
  funnel: (body: Body) => call<FunnelAnswer>("/stats/v1/funnel", body),
  site: () => call<SiteInfo>("/stats/v1/site"),
};
