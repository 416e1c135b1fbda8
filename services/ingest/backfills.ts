/**
 * Ingest's background backfills (services/lib/db/backfill.ts).
 *
 * The page of page views and events stored without one: migration 7 added
 * the column without rewriting the stored rows, and a release older than it
 * (after a rollback) stores none. Readers fall back to the URL's path
 * (ingest.url_path, about 3 µs a row, most of an event:page query's time over
 * old ranges); filled, they read the column. Each batch fills one hour of
 * rows by received_at, from the oldest row without a page to the newest one
 * there was at the start (rows stored since have theirs): a time range the
 * BRIN index on received_at finds, of a few thousand rows at ten million
 * page views a month, whatever the batch size asks.
 */
import type { Backfill } from "../lib/db/backfill.ts";
import type { Queryable } from "../lib/db/mod.ts";

const HOUR_MS = 3_600_000;

/** Where the next batch starts and where the work ends, as stored between batches. */
interface Span {
  from: number;
  to: number;
}

function pageBackfill(table: "page_views" | "events"): Backfill {
  const span = async (q: Queryable): Promise<Span | undefined> => {
    const [row] = await q.query<{ first: number | null; last: number | null }>(
      `select (extract(epoch from min(received_at)) * 1000)::float8 as first,
              (extract(epoch from max(received_at)) * 1000)::float8 as last
         from ingest.${table} where page is null`,
    );
    if (row?.first == null || row.last == null) return undefined;
    return { from: Number(row.first), to: Number(row.last) };
  };
  return {
    name: `${table}_page`,
    since: 7,
    async count(q) {
      const [row] = await q.query<{ n: number }>(
        `select count(*)::float8 as n from ingest.${table} where page is null`,
      );
      return Number(row?.n ?? 0);
    },
    async batch(q, cursor) {
      const at: Span | undefined = cursor ? JSON.parse(cursor) : await span(q);
      if (!at) return { rows: 0, next: undefined };
      const until = Math.min(at.from + HOUR_MS, at.to + 1);
      const filled = await q.query<{ n: number }>(
        `with filled as (
           update ingest.${table} set page = ingest.url_path(url)
            where page is null and received_at >= $1::timestamptz and received_at < $2::timestamptz
           returning 1
         ) select count(*)::int as n from filled`,
        [new Date(at.from).toISOString(), new Date(until).toISOString()],
      );
      const rows = filled[0]?.n ?? 0;
      if (until > at.to) return { rows, next: undefined };
      return { rows, next: JSON.stringify({ from: until, to: at.to }) };
    },
  };
}

export const INGEST_BACKFILLS: readonly Backfill[] = [
  pageBackfill("page_views"),
  pageBackfill("events"),
];
