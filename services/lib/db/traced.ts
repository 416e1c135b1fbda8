/**
 * The storage interface's telemetry, added in one place: a CLIENT span per
 * SQL statement run for a request (named `OPERATION table`, with the
 * parameterised text, never the values), and the pool's use as metrics.
 * openDatabase wraps the store in this only when the runtime exports
 * telemetry, so with it off a query costs nothing more.
 */
import type { Database, Param, Queryable, QueryOptions, Row } from "./mod.ts";
import { activeSpan, type Attributes, inSpan, meter, SpanKind } from "../telemetry.ts";

export interface StatementSummary {
  /** SELECT, INSERT, UPDATE, DELETE, ... */
  operation: string;
  /** The table the statement works on, when one is named. */
  table?: string;
}

const TABLE_AFTER: Record<string, RegExp> = {
  SELECT: /\bfrom\s+([a-z_][\w.]*)/i,
  DELETE: /\bfrom\s+([a-z_][\w.]*)/i,
  INSERT: /\binto\s+([a-z_][\w.]*)/i,
  UPDATE: /^\s*update\s+([a-z_][\w.]*)/i,
};

/** The operation and table of a statement, for span names and attributes. */
export function summarize(text: string): StatementSummary {
  const body = text.replace(/--[^\n]*\n/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ").trim();
  let operation = (body.match(/^[a-z]+/i)?.[0] ?? "").toUpperCase();
  let rest = body;
  if (operation === "WITH") {
    // The statement after the common table expressions says what it does,
    // unless it only answers for CTEs that write: then the first write does
    // (the writer's statements insert in CTEs and select what they changed).
    const main = body.match(/\)\s*(select|insert|update|delete)\b([\s\S]*)$/i);
    const write = body.match(/\bas\s*\(\s*(insert|update|delete)\b([\s\S]*)$/i);
    const said = main?.[1].toLowerCase() === "select" && write ? write : main;
    if (said) {
      operation = said[1].toUpperCase();
      rest = said[1] + said[2];
    }
  }
  const pattern = TABLE_AFTER[operation];
  const table = pattern ? rest.match(pattern)?.[1]?.toLowerCase() : undefined;
  return { operation: operation || "SQL", ...(table ? { table } : {}) };
}

const MAX_TEXT = 2_000;

function statementSpan<T>(system: string, text: string, fn: () => Promise<T>): Promise<T> {
  // Unsampled or outside a request: the statement's summary would go nowhere.
  if (!activeSpan()) return fn();
  const { operation, table } = summarize(text);
  const attributes: Attributes = {
    "db.system": system,
    "db.system.name": system,
    "db.operation.name": operation,
    "db.query.text": text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text,
  };
  if (table) attributes["db.collection.name"] = table;
  const name = table ? `${operation} ${table}` : operation;
  return inSpan({ name, kind: SpanKind.CLIENT, attributes }, fn);
}

function tracedQueryable(inner: Queryable): Queryable {
  return {
    query<T extends Row>(text: string, params?: readonly Param[], options?: QueryOptions) {
      return statementSpan("postgresql", text, () => inner.query<T>(text, params, options));
    },
    exec(script: string) {
      return statementSpan("postgresql", script, () => inner.exec(script));
    },
  };
}

/**
 * Work holding a connection: statements outside a transaction, and
 * transactions. Beyond the pool's size postgres.js queues them. Counted per
 * pool (the write path's, the reports').
 */
const pools = new Map<string, { busy: number; max: number }>();
const each = (
  observe: (value: number, attributes: Attributes) => void,
  value: (pool: { busy: number; max: number }) => number,
) => {
  for (const [name, pool] of pools) {
    observe(value(pool), { "db.client.connection.pool.name": name });
  }
};
meter.createObservableGauge("db.client.connection.count", {
  description: "Connections of the database pool, by state (embedded store: one)",
  unit: "{connection}",
}).addCallback((result) => {
  each((used, attributes) => {
    result.observe(used, { ...attributes, "db.client.connection.state": "used" });
  }, (pool) => Math.min(pool.busy, pool.max));
  each((idle, attributes) => {
    result.observe(idle, { ...attributes, "db.client.connection.state": "idle" });
  }, (pool) => pool.max - Math.min(pool.busy, pool.max));
});
meter.createObservableGauge("db.client.connection.max", {
  description: "Largest number of connections the pool opens",
  unit: "{connection}",
}).addCallback((result) => each((v, a) => result.observe(v, a), (pool) => pool.max));
meter.createObservableGauge("db.client.connection.pending_requests", {
  description: "Statements and transactions waiting for a free connection",
  unit: "{request}",
}).addCallback((result) =>
  each((v, a) => result.observe(v, a), (pool) => Math.max(0, pool.busy - pool.max))
);

/** The store with a span per statement and the pool's use measured under poolName. */
export function traced(
  inner: Database,
  { poolSize, poolName }: { poolSize: number; poolName: string },
): Database {
  const size = inner.kind === "pglite" ? 1 : poolSize;
  let pool = pools.get(poolName);
  if (!pool) pools.set(poolName, pool = { busy: 0, max: 0 });
  const counted = pool;
  counted.max += size;
  const holding = async <T>(fn: () => Promise<T>): Promise<T> => {
    counted.busy++;
    try {
      return await fn();
    } finally {
      counted.busy--;
    }
  };
  const top = tracedQueryable(inner);
  return {
    kind: inner.kind,
    query: (text, params, options) => holding(() => top.query(text, params, options)),
    exec: (script) => holding(() => top.exec(script)),
    transaction: (fn) => holding(() => inner.transaction((tx) => fn(tracedQueryable(tx)))),
    ...(inner.session
      ? {
        session: <T>(fn: (connection: Queryable) => Promise<T>) =>
          holding(() => inner.session!((c) => fn(tracedQueryable(c)))),
      }
      : {}),
    async close() {
      counted.max -= size;
      await inner.close();
    },
  };
}
