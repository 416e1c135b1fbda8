/**
 * The reports for the integration tests: sites with report keys, rows stored
 * as if received at chosen times (through ingest-service's write path, as
 * the gateway hands them over), and queries of POST /stats/v1/query.
 */
import { serviceClient } from "../../services/lib/rpc/client.ts";
import { IngestService, Outcome, Source } from "../../services/lib/gen/crm/ingest/v1/ingest_pb.ts";
import { ingestBodyOf } from "../../services/gateway/ingest_body.ts";
import type { JsonObject } from "../../services/lib/json.ts";
import { analyticsManifest, CHROME, type Json } from "./marketing.ts";
import type { TestSystem } from "./system.ts";

export const REPORT_KEY = "rk_0123456789abcdef0123456789abcdef0123456789abcdef";
export const BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/** A report key of its own for a site id (48 hex from the id). */
export function reportKeyOf(siteId: string): string {
  const hex = Array.from(new TextEncoder().encode(siteId), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `rk_${(hex + "0".repeat(48)).slice(0, 48)}`;
}

/**
 * The analytics test site as another site: its id, zone (null: none), a
 * domain and a report key of its own, with revenue events purchase (USD) and
 * signup (EUR).
 */
export async function statsSite(
  siteId: string,
  timeZone: string | null,
  extra: Json = {},
): Promise<Json> {
  const manifest = await analyticsManifest();
  manifest.site = { ...manifest.site, id: siteId, timeZone, domains: [`${siteId}.example`] };
  manifest.siteKeys = [];
  manifest.secretKeys = [];
  manifest.reportKeys = [reportKeyOf(siteId)];
  manifest.pages = [];
  manifest.sections = [];
  manifest.posts = [];
  manifest.eventTypes.push({
    name: "purchase",
    params: [{ key: "product", type: "string" }],
    bringsRevenue: true,
    currency: "USD",
  });
  return { ...manifest, ...extra };
}

export interface StoredRow {
  /** When the row was received (ISO or Unix ms). */
  at: string | number;
  kind: "view" | "event" | "lead";
  /** The public JSON body, as the route takes it (page views with the widget's short keys). */
  body: JsonObject;
  /** Server rows (events and leads with a secret key); browser rows otherwise. */
  server?: boolean;
  userAgent?: string;
  ip?: string;
}

/**
 * Stores rows through ingest-service (a test system's, or the one at a URL)
 * as the gateway would hand them over at those times.
 */
export async function storeRows(
  target: TestSystem | string,
  siteId: string,
  rows: StoredRow[],
) {
  const url = typeof target === "string" ? target : target.config.ingestUrl;
  const ingest = serviceClient(IngestService, url);
  const kinds = { view: "pageView", event: "event", lead: "lead" } as const;
  const item = (row: StoredRow) => ({
    source: row.server ? Source.SERVER : Source.BROWSER,
    siteId,
    receivedAtMs: BigInt(typeof row.at === "number" ? row.at : Date.parse(row.at)),
    clientIp: row.ip ?? "81.2.69.142",
    userAgent: row.userAgent ?? CHROME,
    body: ingestBodyOf(kinds[row.kind], row.body, { gpc: false }),
  });
  for (const call of callsOf(rows)) {
    const { results } = await ingest.ingest({ items: call.map(item) });
    results.forEach(({ outcome }, i) => {
      if (outcome !== Outcome.STORED && outcome !== Outcome.DUPLICATE) {
        throw new Error(`row not stored: ${JSON.stringify(call[i])} ${Outcome[outcome]}`);
      }
    });
  }
}

/**
 * The rows in calls, in order. A row of a session, an event or a lead goes
 * alone, after the rows before it, as browsers send them; consecutive page
 * views without a session, each of a visitor no other row of its call has,
 * share a call: nothing about one depends on another, and each call is a
 * transaction.
 */
function callsOf(rows: StoredRow[]): StoredRow[][] {
  const calls: StoredRow[][] = [];
  let shared: StoredRow[] = [];
  const visitors = new Set<unknown>();
  const flush = () => {
    if (shared.length) calls.push(shared);
    shared = [];
    visitors.clear();
  };
  for (const row of rows) {
    const visitor = row.body.v;
    const alone = row.kind !== "view" || row.body.s !== undefined || typeof visitor !== "string";
    if (alone) {
      flush();
      calls.push([row]);
      continue;
    }
    if (visitors.has(visitor) || shared.length === 100) flush();
    shared.push(row);
    visitors.add(visitor);
  }
  flush();
  return calls;
}

export interface QueryAnswer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

export async function statsQuery(
  sys: TestSystem | { url: string },
  body: unknown,
  key: string | undefined = REPORT_KEY,
  headers: Record<string, string> = {},
): Promise<QueryAnswer> {
  const response = await fetch(`${sys.url}/stats/v1/query`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { "x-report-key": key }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The results of a query that must succeed: each row as [dimensions..., metrics...]. */
export async function statsRows(
  sys: TestSystem | { url: string },
  siteId: string,
  body: Json,
): Promise<unknown[][]> {
  const answer = await statsQuery(sys, body, reportKeyOf(siteId));
  if (answer.status !== 200) {
    throw new Error(`query failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  // deno-lint-ignore no-explicit-any
  return answer.body.results.map((r: any) => [...r.dimensions, ...r.metrics]);
}
