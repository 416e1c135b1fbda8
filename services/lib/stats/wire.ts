/**
 * The reports query between its public JSON and crm.stats.v1: the body's
 * members as typed JSON values for ingest-service to judge, and the typed
 * answer as the public JSON body. The gateway and `deno task admin stats`
 * both use these, so the two print the same answer.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  MetricValue,
  Query,
  QueryBodySchema,
  QueryResponse,
} from "../gen/crm/stats/v1/stats_pb.ts";
import {
  DIMENSION_NAME,
  DIRECTION_NAME,
  METRIC_NAME,
  OPERATOR_NAME,
  PRESET_NAME,
  QUERY_FIELDS,
  type QueryField,
} from "./names.ts";

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

/** The members of a query body (a JSON object) the query knows, each as sent. */
export function queryBodyOf(
  body: Record<string, unknown>,
): MessageInitShape<typeof QueryBodySchema> {
  const out: Record<string, Value> = {};
  for (const field of QUERY_FIELDS) {
    if (Object.hasOwn(body, field)) out[MEMBER[field]] = valueOf(body[field]);
  }
  return out;
}

/** The members as JSON again, absent ones left out: what ingest-service reads. */
export function queryMembersOf(
  body: MessageInitShape<typeof QueryBodySchema> | undefined,
): Partial<Record<QueryField, Json>> {
  const out: Partial<Record<QueryField, Json>> = {};
  if (!body) return out;
  for (const field of QUERY_FIELDS) {
    const value = body[MEMBER[field]] as Value | undefined;
    if (value !== undefined) out[field] = jsonOf(value);
  }
  return out;
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
  return {
    metrics: query.metrics.map((m) => METRIC_NAME.get(m) ?? null),
    date_range: range?.case === "days"
      ? [range.value.first, range.value.last]
      : range?.case === "preset"
      ? PRESET_NAME.get(range.value) ?? null
      : null,
    dimensions: query.dimensions.map((d) => DIMENSION_NAME.get(d) ?? null),
    filters: query.filters.map((f) => [
      OPERATOR_NAME.get(f.operator) ?? null,
      DIMENSION_NAME.get(f.dimension) ?? null,
      [...f.values],
    ]),
    order_by: query.orderBy.map((o) => [
      o.by.case === "metric"
        ? METRIC_NAME.get(o.by.value) ?? null
        : o.by.case === "dimension"
        ? DIMENSION_NAME.get(o.by.value) ?? null
        : null,
      DIRECTION_NAME.get(o.direction) ?? null,
    ]),
    include: { totals: query.includeTotals, bots: query.includeBots },
    limit: query.limit,
    offset: query.offset,
    time_zone: query.timeZone ?? null,
  };
}

/** The public JSON answer of POST /stats/v1/query. */
export function answerJson(answer: QueryResponse): Json {
  const out: Record<string, Json> = {
    results: answer.results.map((row) => ({
      dimensions: row.dimensions.map((d) => d.value ?? null),
      metrics: row.metrics.map(metricJson),
    })),
  };
  if (answer.totals) out.totals = answer.totals.metrics.map(metricJson);
  out.meta = {
    timeZone: answer.meta?.timeZone ?? "UTC",
    dateRange: [answer.meta?.firstDay ?? "", answer.meta?.lastDay ?? ""],
    totalRows: Number(answer.meta?.totalRows ?? 0),
  };
  out.query = queryJson(answer.query);
  return out;
}
