/**
 * Reading a funnel body (POST /stats/v1/funnel): date_range, filters and
 * time_zone as in the query (visit: filters only), include with bots only,
 * and 2 to 8 steps. The first fault is thrown as a QueryError naming the
 * field. Pure.
 */
import type { Json } from "../../lib/stats/wire.ts";
import {
  FUNNEL_INCLUDE,
  type FunnelField,
  MAX_STEPS,
  MIN_STEPS,
} from "../../lib/stats/vocabulary.ts";
import { isJsonObject } from "../../lib/json.ts";
import {
  dateRange,
  type DateRangeQuery,
  type Filter,
  filters,
  flag,
  includeMembers,
  isVisitDimension,
  list,
  QueryError,
  type SiteFacts,
  timeZone,
} from "./query.ts";

/** A step: a page view of a path (`*` any run of characters), a declared event, or a lead. */
export type Step = { page: string } | { event: string } | { lead: true };

export interface FunnelQuery {
  dateRange: DateRangeQuery;
  filters: Filter[];
  includeBots: boolean;
  steps: Step[];
  timeZone?: string;
}

const STEP_SHAPES = '{"page": PATH}, {"event": NAME} or {"lead": true}';

export interface FunnelSiteFacts extends SiteFacts {
  /** The names of the site's declared event types. */
  eventNames: ReadonlySet<string>;
}

function step(value: Json, field: string, site: FunnelSiteFacts): Step {
  if (!isJsonObject<Json>(value) || Object.keys(value).length !== 1) {
    throw new QueryError(field, `must be one of ${STEP_SHAPES}`);
  }
  const [[kind, target]] = Object.entries(value);
  if (kind === "page") {
    if (typeof target !== "string" || target === "" || target.includes("\u0000")) {
      throw new QueryError(field, "page must be a path such as /pricing (a * matches any run)");
    }
    return { page: target };
  }
  if (kind === "event") {
    if (typeof target !== "string" || !site.eventNames.has(target)) {
      throw new QueryError(field, "event must name one of the site's declared event types");
    }
    return { event: target };
  }
  if (kind === "lead") {
    if (target !== true) throw new QueryError(field, "lead must be true");
    return { lead: true };
  }
  throw new QueryError(field, `unknown step "${kind}"; one of ${STEP_SHAPES}`);
}

function steps(value: Json | undefined, site: FunnelSiteFacts): Step[] {
  const items = list(value, "steps", "steps");
  if (!items) throw new QueryError("steps", `is required: a list of ${STEP_SHAPES}`);
  if (items.length < MIN_STEPS || items.length > MAX_STEPS) {
    throw new QueryError("steps", `must hold ${MIN_STEPS} to ${MAX_STEPS} steps`);
  }
  return items.map((item, i) => step(item, `steps[${i}]`, site));
}

const visitOnly = (d: string) =>
  isVisitDimension(d) ? undefined : "a funnel may be filtered by visit: dimensions only";

/** The funnel a body asks for; throws QueryError at the first fault. */
export function parseFunnel(
  body: Partial<Record<FunnelField, Json>>,
  site: FunnelSiteFacts,
): FunnelQuery {
  const range = dateRange(body.date_range);
  const filterList = filters(body.filters, site, visitOnly);
  const included = includeMembers(body.include, FUNNEL_INCLUDE);
  const bots = flag(included.bots, "include.bots");
  const stepList = steps(body.steps, site);
  const zone = timeZone(body.time_zone);
  return {
    dateRange: range,
    filters: filterList,
    includeBots: bots,
    steps: stepList,
    ...(zone === undefined ? {} : { timeZone: zone }),
  };
}
