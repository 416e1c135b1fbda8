/**
 * The reports query between its public JSON and crm.stats.v1: the body's
 * members as typed JSON values for ingest-service to judge, and the typed
 * answer as the public JSON body. The gateway and `deno task admin stats`
 * both use these, so the two print the same answer.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  Change,
  ComparedRange,
  Comparison,
  FunnelBodySchema,
  FunnelResponse,
  MetricValue,
  Query,
  QueryBodySchema,
  QueryResponse,
  SiteResponse,
} from "../gen/crm/stats/v1/stats_pb.ts";
import {
  COMPARE_PRESET_NAME,
  dimensionNameOf,
  DIRECTION_NAME,
  METRIC_NAME,
  OPERATOR_NAME,
  PRESET_NAME,
} from "./names.ts";
import { FUNNEL_FIELDS, type FunnelField, QUERY_FIELDS, type QueryField } from "./vocabulary.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A parsed JSON value as a google.protobuf.Value, whatever its type. */
export function valueOf(json: unknown): Value {
  if (json === null || json === undefined) {
    return create(ValueSchema, { kind: { case: "nullValue", value: 0 } });
  }
  if (typeof json === "boolean") {
    return create(ValueSchema, { kind: { case: "boolValue", value: json } });
  }
  if (typeof json === "number") {
    return create(ValueSchema, { kind: { case: "numberValue", value: json } });
  }
  if (typeof json === "string") {
    return create(ValueSchema, { kind: { case: "stringValue", value: json } });
  }
  if (Array.isArray(json)) {
    return create(ValueSchema, {
      kind: { case: "listValue", value: { values: json.map(valueOf) } },
    });
  }
  const fields: Record<string, Value> = {};
  for (const [key, member] of Object.entries(json as Record<string, unknown>)) {
    fields[key] = valueOf(member);
  }
  return create(ValueSchema, { kind: { case: "structValue", value: { fields } } });
}

/** A google.protobuf.Value back as the JSON value it carries (an unset kind is null). */
export function jsonOf(value: Value): Json {
  const { kind } = value;
  switch (kind.case) {
    case "boolValue":
    case "numberValue":
    case "stringValue":
      return kind.value;
    case "listValue":
      return kind.value.values.map(jsonOf);
    case "structValue":
      return Object.fromEntries(
        Object.entries(kind.value.fields).map(([key, member]) => [key, jsonOf(member)]),
      );
    default:
      return null;
  }
}

const MEMBER: Record<QueryField, keyof MessageInitShape<typeof QueryBodySchema>> = {
  metrics: "metrics",
  date_range: "dateRange",
  dimensions: "dimensions",
  filters: "filters",
  order_by: "orderBy",
  include: "include",
  limit: "limit",
  offset: "offset",
  time_zone: "timeZone",
};

const FUNNEL_MEMBER: Record<FunnelField, keyof MessageInitShape<typeof FunnelBodySchema>> = {
  date_range: "dateRange",
  filters: "filters",
  include: "include",
  steps: "steps",
  time_zone: "timeZone",
};

/** A body's members that `fields` name, each as sent, as typed JSON values. */
function membersOf<F extends string>(
  body: Record<string, unknown>,
  fields: readonly F[],
  member: Record<F, string>,
): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const field of fields) {
    if (Object.hasOwn(body, field)) out[member[field]] = valueOf(body[field]);
  }
  return out;
}

/** The members as JSON again, absent ones left out: what ingest-service reads. */
function jsonMembersOf<F extends string>(
  body: Record<string, unknown> | undefined,
  fields: readonly F[],
  member: Record<F, string>,
): Partial<Record<F, Json>> {
  const out: Partial<Record<F, Json>> = {};
  if (!body) return out;
  for (const field of fields) {
    const value = body[member[field]] as Value | undefined;
    if (value !== undefined) out[field] = jsonOf(value);
  }
  return out;
}

/** The members of a query body (a JSON object) the query knows, each as sent. */
export function queryBodyOf(
  body: Record<string, unknown>,
): MessageInitShape<typeof QueryBodySchema> {
  return membersOf(body, QUERY_FIELDS, MEMBER);
}

export function queryMembersOf(
  body: MessageInitShape<typeof QueryBodySchema> | undefined,
): Partial<Record<QueryField, Json>> {
  return jsonMembersOf(body as Record<string, unknown> | undefined, QUERY_FIELDS, MEMBER);
}

/** The members of a funnel body (a JSON object) the funnel knows, each as sent. */
export function funnelBodyOf(
  body: Record<string, unknown>,
): MessageInitShape<typeof FunnelBodySchema> {
  return membersOf(body, FUNNEL_FIELDS, FUNNEL_MEMBER);
}

export function funnelMembersOf(
  body: MessageInitShape<typeof FunnelBodySchema> | undefined,
): Partial<Record<FunnelField, Json>> {
  return jsonMembersOf(
    body as Record<string, unknown> | undefined,
    FUNNEL_FIELDS,
    FUNNEL_MEMBER,
  );
}

function metricJson(metric: MetricValue): Json {
  if (metric.value.case === "amounts") {
    const amounts = metric.value.value.minorUnits;
    const out: Record<string, number> = {};
    for (const currency of Object.keys(amounts).sort()) out[currency] = Number(amounts[currency]);
    return out;
  }
  return metric.value.case === "number" ? metric.value.value : 0;
}

/** The query as understood, with the contract's names. */
export function queryJson(query: Query | undefined): Json {
  if (!query) return {};
  const range = query.dateRange?.range;
  const compare = query.compare?.with;
  // time_labels and compare are echoed only when asked for, so a query without them echoes
  // nothing it did not say.
  const include: Record<string, Json> = { totals: query.includeTotals, bots: query.includeBots };
  if (query.includeTimeLabels) include.time_labels = true;
  if (compare?.case === "preset") include.compare = COMPARE_PRESET_NAME.get(compare.value) ?? null;
  if (compare?.case === "days") include.compare = [compare.value.first, compare.value.last];
  return {
    metrics: query.metrics.map((m) => METRIC_NAME.get(m) ?? null),
    date_range: range?.case === "days"
      ? [range.value.first, range.value.last]
      : range?.case === "preset"
      ? PRESET_NAME.get(range.value) ?? null
      : null,
    dimensions: query.queryDimensions.map(dimensionNameOf),
    filters: query.filters.map((f) => [
      OPERATOR_NAME.get(f.operator) ?? null,
      dimensionNameOf(f.queryDimension),
      [...f.values],
    ]),
    order_by: query.orderBy.map((o) => [
      o.by.case === "metric"
        ? METRIC_NAME.get(o.by.value) ?? null
        : o.by.case === "queryDimension"
        ? dimensionNameOf(o.by.value)
        : null,
      DIRECTION_NAME.get(o.direction) ?? null,
    ]),
    include,
    limit: query.limit,
    offset: query.offset,
    time_zone: query.timeZone ?? null,
  };
}

function changeJson(change: Change): Json {
  if (change.value.case === "number") return change.value.value;
  if (change.value.case === "currencies") {
    const percent = change.value.value.percent;
    const out: Record<string, Json> = {};
    for (const currency of Object.keys(percent).sort()) {
      out[currency] = percent[currency].value ?? null;
    }
    return out;
  }
  return null;
}

function comparisonJson(comparison: Comparison | undefined): Json {
  if (!comparison) return null;
  return {
    dimensions: comparison.dimensions.map((d) => d.value ?? null),
    metrics: comparison.metrics.map(metricJson),
    change: comparison.change.map(changeJson),
  };
}

function rangeJson(range: ComparedRange | undefined): Json {
  const r = range?.range;
  return r?.case === "days" || r?.case === "times" ? [r.value.first, r.value.last] : null;
}

/** The public JSON answer of POST /stats/v1/query. */
export function answerJson(answer: QueryResponse): Json {
  const compared = answer.query?.compare !== undefined;
  const out: Record<string, Json> = {
    results: answer.results.map((row) => ({
      dimensions: row.dimensions.map((d) => d.value ?? null),
      metrics: row.metrics.map(metricJson),
      ...(compared ? { comparison: comparisonJson(row.comparison) } : {}),
    })),
  };
  if (answer.totals) out.totals = answer.totals.metrics.map(metricJson);
  if (answer.totals && compared) out.totalsComparison = comparisonJson(answer.totalsComparison);
  const meta: Record<string, Json> = {
    timeZone: answer.meta?.timeZone ?? "UTC",
    dateRange: [answer.meta?.firstDay ?? "", answer.meta?.lastDay ?? ""],
    totalRows: Number(answer.meta?.totalRows ?? 0),
  };
  if (compared) meta.compareDateRange = rangeJson(answer.meta?.comparedRange);
  if (answer.query?.includeTimeLabels) meta.timeLabels = [...(answer.meta?.timeLabels ?? [])];
  out.meta = meta;
  out.query = queryJson(answer.query);
  return out;
}

/** The public JSON answer of POST /stats/v1/funnel. */
export function funnelJson(answer: FunnelResponse): Json {
  return {
    steps: answer.steps.map((s) => {
      const match = s.step?.match;
      const step: Record<string, Json> = match?.case === "page"
        ? { page: match.value }
        : match?.case === "event"
        ? { event: match.value }
        : { lead: true };
      return {
        step,
        visitors: Number(s.visitors),
        visits: Number(s.visits),
        conversionRate: s.conversionRate,
        dropOff: Number(s.dropOff),
      };
    }),
    meta: {
      timeZone: answer.meta?.timeZone ?? "UTC",
      dateRange: [answer.meta?.firstDay ?? "", answer.meta?.lastDay ?? ""],
    },
  };
}

/** The public JSON answer of GET /stats/v1/site. */
export function siteJson(answer: SiteResponse): Json {
  return {
    siteId: answer.siteId,
    timeZone: answer.timeZone ?? null,
    eventTypes: answer.eventTypes.map((type) => ({
      name: type.name,
      title: type.title,
      status: type.status,
      params: type.params.map((param) => ({ key: param.key, type: param.type })),
      bringsRevenue: type.bringsRevenue,
      currency: type.currency ?? null,
    })),
  };
}
