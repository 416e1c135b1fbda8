/**
 * crm.stats.v1.StatsService/Site: what a reader of the reports needs to know
 * of the site besides the rows: its own zone and its declared event types
 * with their parameters (GET /stats/v1/site), so the dashboard can offer the
 * event:props:KEY breakdowns, the event:name values and the funnel's event
 * steps that the query accepts, without a second copy of the manifest.
 */
import { create } from "@bufbuild/protobuf";
import { type SiteResponse, SiteResponseSchema } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { Code, publicError, siteNotFound } from "../lib/errors.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";

/** The stored facts the answer is made of (IngestStore has them). */
export interface SiteDeclarations {
  /** The site's own zone, null while it has none, undefined when the site is unknown. */
  siteTimeZone(siteId: string): Promise<string | null | undefined>;
  /** Every event type of the site, archived ones included, in manifest order. */
  eventTypes(siteId: string): Promise<EventTypeDef[]>;
}

export async function siteAnswer(store: SiteDeclarations, siteId: string): Promise<SiteResponse> {
  const timeZone = await store.siteTimeZone(siteId);
  if (timeZone === undefined) {
    throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
  }
  const types = await store.eventTypes(siteId);
  return create(SiteResponseSchema, {
    siteId,
    timeZone: timeZone ?? undefined,
    eventTypes: types.map((type) => ({
      name: type.name,
      title: type.title,
      status: type.status,
      params: type.params.map((param) => ({ key: param.key, type: param.type })),
      bringsRevenue: type.bringsRevenue,
      currency: type.currency ?? undefined,
    })),
  });
}
