/**
 * The reports' schemas: the query, the funnel, the site, and their answers.
 * Names, members and limits come from the reports' vocabulary, which the
 * parser reads the same bodies with.
 */
import {
  COMPARE_PRESETS,
  DIRECTIONS,
  FIXED_DIMENSIONS,
  FUNNEL_INCLUDE,
  MAX_DIMENSIONS,
  MAX_LIMIT,
  MAX_SEGMENT_FILTERS,
  MAX_SEGMENT_NAME,
  MAX_STEPS,
  METRICS,
  MIN_STEPS,
  OPERATORS,
  PRESETS,
  PROPS_PREFIX,
  QUERY_FIELDS,
  QUERY_INCLUDE,
  type QueryField,
  SEGMENT_FILTER,
} from "../../../lib/stats/vocabulary.ts";
import { type Json, ref } from "../components.ts";

const DATE = { type: "string", format: "date", examples: ["2026-11-21"] };
const DAY_RANGE = {
  type: "array",
  prefixItems: [DATE, DATE],
  minItems: 2,
  maxItems: 2,
  description: "First and last local day, inclusive.",
};

/** A metric's value: a number, or for `revenue` an object of currency to minor units. */
const METRIC_VALUE = {
  anyOf: [
    { type: "number" },
    { type: "object", additionalProperties: { type: "integer" }, description: "revenue" },
  ],
};
/** A change: percent or percentage points, null where the compared value is 0. */
const CHANGE_VALUE = {
  anyOf: [
    { type: "number" },
    { type: "null" },
    {
      type: "object",
      additionalProperties: { anyOf: [{ type: "number" }, { type: "null" }] },
      description: "revenue: currency to percent change",
    },
  ],
};

const DIMENSION_NAME = {
  type: "string",
  description: "A dimension name, or `event:props:KEY` for a declared event parameter.",
  anyOf: [{ enum: [...FIXED_DIMENSIONS] }, { pattern: `^${PROPS_PREFIX}.+$` }],
};
const METRIC_NAME = { type: "string", enum: [...METRICS] };
const DATE_RANGE = {
  description: "A preset, or `[first, last]` local days.",
  anyOf: [{ type: "string", enum: [...PRESETS] }, DAY_RANGE],
};
const FILTER = {
  type: "array",
  description: "`[operator, dimension, values]`: the row holds when the operator does; " +
    '`["is", "segment", [ID, ...]]` holds for the visits of saved segments.',
  prefixItems: [
    { type: "string", enum: [...OPERATORS] },
    {
      ...DIMENSION_NAME,
      anyOf: [...DIMENSION_NAME.anyOf, { const: SEGMENT_FILTER }],
    },
    { type: "array", items: { type: "string" }, minItems: 1 },
  ],
  minItems: 3,
  maxItems: 3,
};

/**
 * An optional member of a query or funnel body: `null` is taken as absent
 * (services/ingest/stats/query.ts), so a client that writes an unset member
 * as null is understood.
 */
const orNull = (schema: Json): Json => ({ anyOf: [schema, { type: "null" }] });

export const STATS_SCHEMAS: Record<string, Json> = {
  Query: {
    type: "object",
    description: "A reports query. A `null` member counts as absent; unknown members are ignored.",
    required: ["metrics", "date_range"],
    properties: {
      metrics: { type: "array", items: METRIC_NAME, minItems: 1, uniqueItems: true },
      date_range: DATE_RANGE,
      dimensions: orNull({
        type: "array",
        items: DIMENSION_NAME,
        maxItems: MAX_DIMENSIONS,
        uniqueItems: true,
      }),
      filters: orNull({ type: "array", items: FILTER }),
      order_by: orNull({
        type: "array",
        items: {
          type: "array",
          prefixItems: [{ type: "string" }, { type: "string", enum: [...DIRECTIONS] }],
          minItems: 2,
          maxItems: 2,
        },
      }),
      include: orNull({
        type: "object",
        additionalProperties: false,
        properties: {
          totals: orNull({ type: "boolean" }),
          bots: orNull({ type: "boolean" }),
          time_labels: orNull({ type: "boolean" }),
          compare: orNull({
            anyOf: [{ type: "string", enum: [...COMPARE_PRESETS] }, DAY_RANGE],
          }),
        } satisfies Record<typeof QUERY_INCLUDE[number], Json>,
      }),
      limit: orNull({ type: "integer", minimum: 1, maximum: MAX_LIMIT }),
      offset: orNull({ type: "integer", minimum: 0 }),
      time_zone: orNull({ type: "string", description: "IANA name, used while the site has none" }),
    } satisfies Record<QueryField, Json>,
  },
  Comparison: {
    type: ["object", "null"],
    required: ["dimensions", "metrics", "change"],
    additionalProperties: false,
    properties: {
      dimensions: { type: "array", items: { type: ["string", "null"] } },
      metrics: { type: "array", items: METRIC_VALUE },
      change: { type: "array", items: CHANGE_VALUE },
    },
  },
  QueryAnswer: {
    type: "object",
    required: ["results", "meta", "query"],
    additionalProperties: false,
    properties: {
      results: {
        type: "array",
        items: {
          type: "object",
          required: ["dimensions", "metrics"],
          additionalProperties: false,
          properties: {
            dimensions: { type: "array", items: { type: ["string", "null"] } },
            metrics: { type: "array", items: METRIC_VALUE },
            comparison: ref("Comparison"),
          },
        },
      },
      totals: { type: "array", items: METRIC_VALUE },
      totalsComparison: ref("Comparison"),
      meta: {
        type: "object",
        required: ["timeZone", "dateRange", "totalRows"],
        additionalProperties: false,
        properties: {
          timeZone: { type: "string" },
          dateRange: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
          totalRows: { type: "integer", minimum: 0 },
          compareDateRange: {
            type: ["array", "null"],
            items: { type: "string" },
            minItems: 2,
            maxItems: 2,
            description: "Local days, or times for `30m` and `5m`",
          },
          timeLabels: { type: "array", items: { type: "string" } },
        },
      },
      query: {
        type: "object",
        description: "The query as understood, defaults filled in.",
        required: [...QUERY_FIELDS],
        additionalProperties: false,
        properties: {
          metrics: { type: "array", items: { type: ["string", "null"] } },
          date_range: {
            anyOf: [{ type: "string" }, { type: "null" }, {
              type: "array",
              items: { type: "string" },
            }],
          },
          dimensions: { type: "array", items: { type: ["string", "null"] } },
          filters: { type: "array", items: { type: "array" } },
          order_by: { type: "array", items: { type: "array" } },
          include: {
            type: "object",
            required: ["totals", "bots"],
            additionalProperties: false,
            properties: {
              totals: { type: "boolean" },
              bots: { type: "boolean" },
              time_labels: { type: "boolean" },
              compare: {
                anyOf: [{ type: "string" }, { type: "null" }, {
                  type: "array",
                  items: { type: "string" },
                }],
              },
            },
          },
          limit: { type: "integer" },
          offset: { type: "integer" },
          time_zone: { type: ["string", "null"] },
        },
      },
    },
  },
  FunnelStep: {
    oneOf: [
      {
        type: "object",
        required: ["page"],
        additionalProperties: false,
        properties: { page: { type: "string", description: "A path; `*` matches any run" } },
      },
      {
        type: "object",
        required: ["event"],
        additionalProperties: false,
        properties: { event: { type: "string" } },
      },
      {
        type: "object",
        required: ["lead"],
        additionalProperties: false,
        properties: { lead: { const: true } },
      },
    ],
  },
  Funnel: {
    type: "object",
    description: "A funnel. A `null` member counts as absent; unknown members are ignored.",
    required: ["date_range", "steps"],
    properties: {
      date_range: DATE_RANGE,
      filters: orNull({ type: "array", items: FILTER, description: "`visit:` filters only" }),
      include: orNull({
        type: "object",
        additionalProperties: false,
        properties: {
          bots: orNull({ type: "boolean" }),
        } satisfies Record<typeof FUNNEL_INCLUDE[number], Json>,
      }),
      steps: { type: "array", items: ref("FunnelStep"), minItems: MIN_STEPS, maxItems: MAX_STEPS },
    },
  },
  FunnelAnswer: {
    type: "object",
    required: ["steps", "meta"],
    additionalProperties: false,
    properties: {
      steps: {
        type: "array",
        items: {
          type: "object",
          required: ["step", "visitors", "visits", "conversionRate", "dropOff"],
          additionalProperties: false,
          properties: {
            step: ref("FunnelStep"),
            visitors: { type: "integer", minimum: 0 },
            visits: { type: "integer", minimum: 0 },
            conversionRate: { type: "number", minimum: 0, maximum: 100 },
            dropOff: { type: "integer" },
          },
        },
      },
      meta: {
        type: "object",
        required: ["timeZone", "dateRange"],
        additionalProperties: false,
        properties: {
          timeZone: { type: "string" },
          dateRange: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
        },
      },
    },
  },
  Site: {
    type: "object",
    required: ["siteId", "timeZone", "eventTypes"],
    additionalProperties: false,
    properties: {
      siteId: { type: "string" },
      timeZone: { type: ["string", "null"] },
      eventTypes: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "title", "status", "params", "bringsRevenue", "currency"],
          additionalProperties: false,
          properties: {
            name: { type: "string" },
            title: { type: "string" },
            status: { type: "string", examples: ["active", "archived"] },
            params: {
              type: "array",
              items: {
                type: "object",
                required: ["key", "type"],
                additionalProperties: false,
                properties: { key: { type: "string" }, type: { type: "string" } },
              },
            },
            bringsRevenue: { type: "boolean" },
            currency: { type: ["string", "null"] },
          },
        },
      },
    },
  },
  SegmentBody: {
    type: "object",
    description:
      `A segment: a name unique in the site and 1 to ${MAX_SEGMENT_FILTERS} filters on visit: and ` +
      "event: dimensions. Unknown members are ignored.",
    required: ["name", "filters"],
    properties: {
      name: { type: "string", minLength: 1, maxLength: MAX_SEGMENT_NAME },
      filters: { type: "array", items: FILTER, minItems: 1, maxItems: MAX_SEGMENT_FILTERS },
    },
  },
  Segment: {
    type: "object",
    required: ["id", "name", "filters"],
    additionalProperties: false,
    properties: {
      id: { type: "string", pattern: "^seg_[0-9a-f]{24}$" },
      name: { type: "string" },
      filters: { type: "array", items: FILTER },
    },
  },
  Segments: {
    type: "object",
    required: ["segments"],
    additionalProperties: false,
    properties: { segments: { type: "array", items: ref("Segment") } },
  },
};
