/**
 * Monthly range partitions of the page view and event tables, by
 * received_at in UTC: ingest.events_p2026_11 holds November 2026. They are
 * created ahead of time (this month and the next at start-up and every hour)
 * and on demand for any month a batch needs; retention drops whole ones.
 */
import type { Database, Queryable } from "../lib/db/mod.ts";

export const PARTITIONED_TABLES = ["page_views", "events"] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

export interface Month {
  /** "2026_11" */
  key: string;
  /** First instant of the month (UTC), Unix ms. */
  from: number;
  /** First instant of the next month (UTC), Unix ms. */
  to: number;
}

export function monthOf(ms: number): Month {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  return {
    key: `${year}_${String(month + 1).padStart(2, "0")}`,
    from: Date.UTC(year, month, 1),
    to: Date.UTC(year, month + 1, 1),
  };
}

export interface Partition {
  table: PartitionedTable;
  name: string;
  from: number;
  to: number;
}

const NAME = /^(page_views|events)_p(\d{4})_(\d{2})$/;

/** Partitions of both tables that exist now, oldest first. */
export async function listPartitions(db: Queryable): Promise<Partition[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name
       from pg_inherits i
       join pg_class c on c.oid = i.inhrelid
       join pg_class p on p.oid = i.inhparent
       join pg_namespace n on n.oid = p.relnamespace
      where n.nspname = 'ingest' and p.relname in ('page_views', 'events')`,
  );
  const out: Partition[] = [];
  for (const { name } of rows) {
    const match = NAME.exec(name);
    if (!match) continue;
    const month = monthOf(Date.UTC(Number(match[2]), Number(match[3]) - 1, 1));
    out.push({ table: match[1] as PartitionedTable, name, from: month.from, to: month.to });
  }
  return out.sort((a, b) => a.from - b.from || a.name.localeCompare(b.name));
}

export class Partitions {
  #known = new Set<string>();

  constructor(private readonly db: Database) {}

  /** Creates the partitions of these months that do not exist yet. */
  async ensure(months: readonly number[]): Promise<void> {
    const missing = new Map<string, Month>();
    for (const ms of months) {
      const month = monthOf(ms);
      if (!this.#known.has(month.key)) missing.set(month.key, month);
    }
    if (missing.size === 0) return;
    await this.db.transaction(async (tx) => {
      // Replicas creating the same partition at once would collide; one at a time.
      await tx.query("select pg_advisory_xact_lock(hashtext('crm-ingest-partitions'))");
      for (const month of missing.values()) {
        for (const table of PARTITIONED_TABLES) {
          await tx.exec(
            `create table if not exists ingest.${table}_p${month.key}
               partition of ingest.${table}
               for values from ('${new Date(month.from).toISOString()}')
               to ('${new Date(month.to).toISOString()}')`,
          );
        }
      }
    });
    for (const key of missing.keys()) this.#known.add(key);
  }

  /** This month and the next. */
  ensureAhead(now: number): Promise<void> {
    const next = monthOf(now).to;
    return this.ensure([now, next]);
  }

  /** Forgets what it knew (after retention dropped partitions). */
  forget(): void {
    this.#known.clear();
  }
}
