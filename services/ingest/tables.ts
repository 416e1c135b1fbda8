/**
 * The one description of the tables the writer fills and the exports read:
 * each column's name, SQL type and TypeScript type. The writer's statements
 * (the insert's column list, its select list and the json_to_recordset
 * record), the exports' select lists and the row types of rows.ts all come
 * from here, so a column is named once. The tables themselves are made by the
 * migrations (migrations/, forward-only); tables_test.ts checks that every
 * column described here exists there with this type.
 */
import type { ParamValue } from "./params.ts";

type SqlType = "text" | "timestamptz" | "boolean" | "double precision" | "bigint" | "json" | "uuid";

/** A column holding values of type T (the type parameter exists for the row types only). */
export interface Column<T> {
  sql: SqlType;
  /** SQL the insert writes when a row leaves the value out (null). */
  whenNull?: string;
  /** Never read: carries T. */
  readonly value?: T;
}

const column = <T>(sql: SqlType, whenNull?: string): Column<T> => ({ sql, whenNull });

const text = () => column<string>("text");
const optionalText = () => column<string | null>("text");
/** A JSON object column, '{}' when a row has none. */
const jsonObject = <T>() => column<T>("json", "'{}'::json");

/**
 * The path of the row's URL (the reports' event:page), worked out by the
 * insert itself with the one definition the reports use (ingest.url_path),
 * so a report reads it instead of running a regular expression per row.
 * Rows never carry it (rows.ts leaves it out); rows stored before it existed
 * have null, and readers fall back to ingest.url_path(url).
 */
const pageColumn = () => column<string | null>("text", "ingest.url_path(url)");

export type Columns = Record<string, Column<unknown>>;

export interface Table<C extends Columns> {
  /** Schema-qualified name. */
  name: string;
  columns: C;
}

/** The row a table's description describes: one member per column. */
export type RowOf<C extends Columns> = { [K in keyof C]: C[K] extends Column<infer T> ? T : never };

const ATTRIBUTION = {
  channel: optionalText(),
  utm_source: optionalText(),
  utm_medium: optionalText(),
  utm_campaign: optionalText(),
  utm_term: optionalText(),
  utm_content: optionalText(),
  ad_link: optionalText(),
};

/** The columns of where a visit came from, in every table that carries it. */
export type AttributionColumn = keyof typeof ATTRIBUTION;
export const ATTRIBUTION_COLUMNS = Object.keys(ATTRIBUTION) as AttributionColumn[];

export const VISITORS = {
  name: "ingest.visitors",
  columns: {
    site_id: text(),
    visitor_id: text(),
    first_seen: column<string>("timestamptz"),
    last_seen: column<string>("timestamptz"),
    first_session_id: optionalText(),
  },
};

export const SESSIONS = {
  name: "ingest.sessions",
  columns: {
    site_id: text(),
    session_id: text(),
    visitor_id: optionalText(),
    started_at: column<string>("timestamptz"),
    ...ATTRIBUTION,
    click_ids: jsonObject<Record<string, string>>(),
    landing_url: optionalText(),
    referrer: optionalText(),
  },
};

export const PAGE_VIEWS = {
  name: "ingest.page_views",
  columns: {
    site_id: text(),
    /** ISO 8601 */
    received_at: column<string>("timestamptz"),
    visitor_id: optionalText(),
    session_id: optionalText(),
    url: text(),
    title: optionalText(),
    referrer: optionalText(),
    ...ATTRIBUTION,
    click_ids: jsonObject<Record<string, string>>(),
    ad_cookies: jsonObject<Record<string, string>>(),
    screen: optionalText(),
    viewport: optionalText(),
    pixel_ratio: column<number | null>("double precision"),
    language: optionalText(),
    time_zone: optionalText(),
    country: optionalText(),
    device: optionalText(),
    browser: optionalText(),
    os: optionalText(),
    new_visitor: column<boolean | null>("boolean"),
    bot: column<boolean>("boolean"),
    ip: optionalText(),
    page: pageColumn(),
  },
};

export const EVENT_IDS = {
  name: "ingest.event_ids",
  columns: {
    site_id: text(),
    event_id: text(),
    received_at: column<string>("timestamptz"),
  },
};

export const EVENTS = {
  name: "ingest.events",
  columns: {
    site_id: text(),
    received_at: column<string>("timestamptz"),
    name: text(),
    event_id: optionalText(),
    visitor_id: optionalText(),
    session_id: optionalText(),
    url: optionalText(),
    params: jsonObject<Record<string, ParamValue>>(),
    value: column<number | null>("bigint"),
    currency: optionalText(),
    source: column<"browser" | "server">("text"),
    ...ATTRIBUTION,
    bot: column<boolean | null>("boolean"),
    page: pageColumn(),
  },
};

export const LEADS = {
  name: "ingest.leads",
  columns: {
    id: column<string>("uuid"),
    site_id: text(),
    received_at: column<string>("timestamptz"),
    lead_id: optionalText(),
    source: column<"browser" | "server">("text"),
    form: optionalText(),
    name: optionalText(),
    email: optionalText(),
    phone: optionalText(),
    message: optionalText(),
    fields: jsonObject<Record<string, ParamValue>>(),
    visitor_id: optionalText(),
    session_id: optionalText(),
    url: optionalText(),
    ...ATTRIBUTION,
  },
};

export const WRITTEN_TABLES: Table<Columns>[] = [
  VISITORS,
  SESSIONS,
  PAGE_VIEWS,
  EVENT_IDS,
  EVENTS,
  LEADS,
];

/**
 * The record type of json_to_recordset for these columns of the table:
 * `r(site_id text, visitor_id text, ...)`.
 */
export function recordOf<C extends Columns>(table: Table<C>, names: (keyof C & string)[]): string {
  return `r(${names.map((name) => `${name} ${table.columns[name].sql}`).join(", ")})`;
}

/**
 * One statement inserting every row of a JSON array (parameter $1) into the
 * table, each column from the row's member of the same name.
 */
export function insertFromJson<C extends Columns>(
  table: Table<C>,
  options: {
    onConflict?: "do nothing";
    returning?: string;
    /** The parameter holding the rows' JSON array ($1 unless given). */
    param?: number;
    /** A condition on each row (`r`) of the array. */
    where?: string;
  } = {},
): string {
  const names = Object.keys(table.columns) as (keyof C & string)[];
  const values = names.map((name) => {
    const whenNull = table.columns[name].whenNull;
    return whenNull ? `coalesce(${name}, ${whenNull})` : name;
  });
  return [
    `insert into ${table.name} (${names.join(", ")})`,
    `select ${values.join(", ")}`,
    `from json_to_recordset($${options.param ?? 1}::json) as ${recordOf(table, names)}`,
    options.where ? `where ${options.where}` : "",
    options.onConflict ? `on conflict ${options.onConflict}` : "",
    options.returning ? `returning ${options.returning}` : "",
  ].filter((line) => line !== "").join("\n");
}

/**
 * The select list reading the table's columns back as JavaScript values, the
 * same from postgres.js and PGlite: bigint as a float8 number, uuid as text.
 */
export function selectList<C extends Columns>(
  table: Table<C>,
  except: (keyof C & string)[],
): string {
  return Object.entries(table.columns)
    .filter(([name]) => !except.includes(name))
    .map(([name, c]) =>
      c.sql === "bigint"
        ? `${name}::float8 as ${name}`
        : c.sql === "uuid"
        ? `${name}::text as ${name}`
        : name
    )
    .join(", ");
}
