/**
 * Segments between their public JSON and crm.stats.v1: a body's members as
 * typed JSON values for ingest-service to judge, and a segment as the
 * public JSON `{"id", "name", "filters"}`.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Segment, SegmentBodySchema } from "../gen/crm/stats/v1/stats_pb.ts";
import { type Json, jsonOf, valueOf } from "./wire.ts";

/** The members `name` and `filters` of a segment body, as sent (absent ones left out). */
export function segmentBodyOf(
  body: Record<string, unknown>,
): MessageInitShape<typeof SegmentBodySchema> {
  return {
    ...(Object.hasOwn(body, "name") ? { name: valueOf(body.name) } : {}),
    ...(Object.hasOwn(body, "filters") ? { filters: valueOf(body.filters) } : {}),
  };
}

/** The members of a segment body as JSON again, absent ones undefined. */
export function segmentMembersOf(
  body: { name?: Parameters<typeof jsonOf>[0]; filters?: Parameters<typeof jsonOf>[0] } | undefined,
): { name?: Json; filters?: Json } {
  return {
    ...(body?.name ? { name: jsonOf(body.name) } : {}),
    ...(body?.filters ? { filters: jsonOf(body.filters) } : {}),
  };
}

export interface SegmentJson {
  id: string;
  name: string;
  filters: Json;
}

export function segmentJson(segment: Segment): SegmentJson {
  return {
    id: segment.id,
    name: segment.name,
    filters: segment.filters ? jsonOf(segment.filters) : [],
  };
}
