/**
 * What a rollup holds, worked out from records: for an interval of time and
 * every value of every dimension, the sums the reports need. Pure; the
 * builder (rollups.ts) stores them per local day and month, and a query
 * works out the same for days not built yet (engine.ts).
 *
 * - Rows (page views, events, leads) count in the interval of their own
 *   time, under their visit's attribute values, and under their page and
 *   event properties with their event name.
 * - Visits count in the interval they begin in, with their values over all
 *   their rows (a query puts right the visits crossing its range's ends).
 * - Visitors are the set of the rows' visitors: the visitors of several
 *   intervals are the size of the union of their sets.
 * Bots are left out, as by a query without include.bots.
 */
import { KIND, VISIT_ATTRIBUTES } from "./dimensions.ts";

/** The dimension of the sums over every row and visit. */
export const ALL = "";
export const PAGE = "event:page";
export const PROPS = "event:props:";

/** A visit that begins in the interval, with its values over all its rows. */
export interface VisitRecord {
  /** Attribute column to value (dimensions.ts). */
  attributes: Record<string, string | null>;
  pageviews: number;
  events: number;
  durationMs: number;
}

/** A row in the interval. */
export interface RowRecord {
  kind: number;
  name: string | null;
  page: string | null;
  /** The event's parameters (JSON values by key), or null. */
  props: Record<string, unknown> | null;
  value: number | null;
  currency: string | null;
  /** The visitor's number, or null for a visitor that has none yet (then its key counts). */
  visitorNumber: number | null;
  visitorKey: string;
  /** Its visit's attribute values. */
  attributes: Record<string, string | null>;
}

export interface Sums {
  visitorNumbers: Set<number>;
  visitorKeys: Set<string>;
  visits: number;
  bounces: number;
  durationMs: number;
  visitPageviews: number;
  pageviews: number;
  events: number;
  leads: number;
  /** Minor units per currency. */
  revenue: Map<string, bigint>;
}

export const emptySums = (): Sums => ({
  visitorNumbers: new Set(),
  visitorKeys: new Set(),
  visits: 0,
  bounces: 0,
  durationMs: 0,
  visitPageviews: 0,
  pageviews: 0,
  events: 0,
  leads: 0,
  revenue: new Map(),
});

/** One group of a rollup: a dimension, a value, and for event dimensions the rows' event name. */
export interface RollupKey {
  dimension: string;
  value: string | null;
  eventName: string | null;
}

export const keyText = (k: RollupKey) => JSON.stringify([k.dimension, k.value, k.eventName]);

/** An event property's value as text: numbers in shortest form, booleans true or false. */
export function propertyText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Which groups to work out: every dimension (the builder), or those a query
 * reads: the all-visits sums, one visit attribute's column, page, or one
 * property key. A property's groups hold every row, those without it under
 * the value null, as the reports count them.
 */
export interface Wanted {
  all: boolean;
  attributes: readonly string[];
  page: boolean;
  props: readonly string[];
}

/** Every group: what the builder keeps for a site whose event types declare `props`. */
export const everyGroup = (props: readonly string[]): Wanted => ({
  all: true,
  attributes: VISIT_ATTRIBUTES.map((a) => a.column),
  page: true,
  props,
});

/** The sums of every wanted group of an interval's visits and rows. */
export function rollupOf(
  visits: Iterable<VisitRecord>,
  rows: Iterable<RowRecord>,
  wanted: Wanted,
): Map<string, { key: RollupKey; sums: Sums }> {
  const groups = new Map<string, { key: RollupKey; sums: Sums }>();
  const sums = (dimension: string, value: string | null, eventName: string | null = null) => {
    const text = `${dimension}\u0000${value ?? "\u0001"}\u0000${eventName ?? "\u0001"}`;
    let group = groups.get(text);
    if (!group) {
      groups.set(text, group = { key: { dimension, value, eventName }, sums: emptySums() });
    }
    return group.sums;
  };
  // A visit's groups, worked out once for the records that share its attribute values.
  const ofVisit = new WeakMap<object, Sums[]>();
  const visitKeys = (attributes: Record<string, string | null>) => {
    let found = ofVisit.get(attributes);
    if (!found) {
      found = [
        ...(wanted.all ? [sums(ALL, null)] : []),
        ...wanted.attributes.map((c) => sums(`visit:${c}`, attributes[c] ?? null)),
      ];
      ofVisit.set(attributes, found);
    }
    return found;
  };
  for (const v of visits) {
    for (const s of visitKeys(v.attributes)) {
      s.visits += 1;
      if (v.pageviews === 1 && v.events === 0) s.bounces += 1;
      s.durationMs += v.durationMs;
      s.visitPageviews += v.pageviews;
    }
  }
  for (const r of rows) {
    const targets = [...visitKeys(r.attributes)];
    if (wanted.page) targets.push(sums(PAGE, r.page, r.name));
    for (const key of wanted.props) {
      targets.push(sums(`${PROPS}${key}`, propertyText(r.props?.[key]), r.name));
    }
    const valued = r.value !== null && r.currency !== null;
    for (const s of targets) {
      if (r.visitorNumber === null) s.visitorKeys.add(r.visitorKey);
      else s.visitorNumbers.add(r.visitorNumber);
      if (r.kind === KIND.pageview) s.pageviews += 1;
      else if (r.kind === KIND.event) s.events += 1;
      else s.leads += 1;
      if (valued) s.revenue.set(r.currency!, (s.revenue.get(r.currency!) ?? 0n) + BigInt(r.value!));
    }
  }
  // Keyed as keyText says, for the callers.
  return new Map([...groups.values()].map((g) => [keyText(g.key), g]));
}
