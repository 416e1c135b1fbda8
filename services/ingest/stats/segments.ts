/**
 * Segments in the reports: reading a segment body (POST and PUT
 * /stats/v1/segments), finding the ids a query or funnel names, and putting
 * a segment filter into the query's own filters wherever that says exactly
 * the same, so one engine answers (and the fast paths stay open). What no
 * list of plain filters can say (several segments of many filters, or a
 * segment's event: filters, which keep whole visits) stays a segment filter,
 * compiled from the same filter conditions (plan.ts, segmentCondition).
 */
import type { Json } from "../../lib/stats/wire.ts";
import { MAX_SEGMENT_NAME } from "../../lib/stats/vocabulary.ts";
import {
  type Filter,
  isVisitDimension,
  type Operator,
  QueryError,
  SEGMENT,
  segmentFilters,
  type SiteFacts,
} from "./query.ts";

export { MAX_SEGMENT_NAME };

/** A segment as a body gives it, judged: the name trimmed, filters as the query writes them. */
export interface SegmentInput {
  name: string;
  filters: [string, string, string[]][];
}

/** The members of a segment body; the first fault thrown as a QueryError. */
export function parseSegmentBody(
  body: { name?: Json; filters?: Json },
  site: SiteFacts,
): SegmentInput {
  const { name } = body;
  if (typeof name !== "string") throw new QueryError("name", "is required: a text");
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > MAX_SEGMENT_NAME) {
    throw new QueryError("name", `must be 1 to ${MAX_SEGMENT_NAME} characters`);
  }
  const filters = segmentFilters(body.filters, site, "filters");
  return {
    name: trimmed,
    filters: filters.map((f) => [f.operator, f.dimension, f.values]),
  };
}

/** The segment ids a body's filters name (to be looked up before the body is judged). */
export function segmentIdsOf(filters: Json | undefined): string[] {
  if (!Array.isArray(filters)) return [];
  const ids = new Set<string>();
  for (const f of filters) {
    if (Array.isArray(f) && f[1] === SEGMENT && Array.isArray(f[2])) {
      for (const id of f[2]) if (typeof id === "string") ids.add(id);
    }
  }
  return [...ids];
}

/** The operator that holds exactly where `operator` does not (nulls included). */
const COMPLEMENT: Record<Operator, Operator> = {
  is: "is_not",
  is_not: "is",
  contains: "contains_not",
  contains_not: "contains",
};

/**
 * A segment filter as plain filters of the query when they say exactly the
 * same, else undefined. A visit: filter already keeps or drops whole visits,
 * so: `is` one segment of visit: filters is those filters; `is_not` segments
 * of one visit: filter each is each filter's complement; `is` segments of one
 * visit: filter each, on one dimension with one operator, is one filter of
 * all their values.
 */
export function plainFilters(filter: Filter): Filter[] | undefined {
  const segments = filter.segments ?? [];
  const visitOnly = segments.every((s) => s.every((f) => isVisitDimension(f.dimension)));
  if (!visitOnly || segments.length === 0) return undefined;
  if (filter.operator === "is" && segments.length === 1) return segments[0];
  if (!segments.every((s) => s.length === 1)) return undefined;
  const singles = segments.map((s) => s[0]);
  if (filter.operator === "is_not") {
    return singles.map((f) => ({ ...f, operator: COMPLEMENT[f.operator] }));
  }
  const [first] = singles;
  const alike = singles.every((f) =>
    f.dimension === first.dimension && f.operator === first.operator
  );
  if (!alike || (first.operator !== "is" && first.operator !== "contains")) return undefined;
  return [{ ...first, values: [...new Set(singles.flatMap((f) => f.values))] }];
}

/** The query's filters with every segment filter put as plain filters where that is exact. */
export function expandSegments(filters: readonly Filter[]): Filter[] {
  return filters.flatMap((f) => (f.dimension === SEGMENT ? plainFilters(f) ?? [f] : [f]));
}
