/**
 * Monthly range partitions of the page view and event tables, by
 * received_at in UTC: ingest.events_p2026_11 holds November 2026. This month
 * and the next MONTHS_AHEAD are made when ingest-service starts and every
 * hour after; a write batch or a history import makes the months it needs
 * before it inserts; retention drops whole ones. How many months are ready
 * ahead is the gauge crm.ingest.partitions.ahead.
 */
import type { Database, Queryable } from "../lib/db/mod.ts";
import { type Clock, systemClock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { gaugeOverInstances } from "../lib/telemetry.ts";

/** Months after the current one made ahead of need. */
export const MONTHS_AHEAD = 3;

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

/** The months ahead: the fewest any Partitions of this process counts. */
const aheadGauge = gaugeOverInstances<Partitions>("crm.ingest.partitions.ahead", {
  description: "Months after the current one whose page view and event partitions exist",
  unit: "{month}",
  value: (partitions) => partitions.monthsAhead(),
  pick: "lowest",
});

export interface PartitionsOptions {
  /** Where a failure to make partitions is told (at warn). */
  log?: Logger;
  /** The time the months ahead are counted from. */
  clock?: Clock;
}

export interface EnsureOptions {
  /**
   * Look in the catalogue instead of trusting the months this process made
   * or saw before. Retention on another replica may have dropped an old
   * month since; live rows are never that old, imported history may be.
   */
  verify?: boolean;
}

/** Partition names of a month, one per table. */
const namesOf = (month: Month) => PARTITIONED_TABLES.map((table) => `${table}_p${month.key}`);

export class Partitions {
  /** Months whose partitions exist, as this process last made or saw them. */
  #known = new Set<string>();
  /** Whether the months ahead were ever checked (the gauge reports nothing before). */
  #checked = false;

  constructor(private readonly db: Database, private readonly options: PartitionsOptions = {}) {
    aheadGauge.add(this);
  }

  /** Makes the partitions of the months these times fall in, where they do not exist yet. */
  async ensure(times: readonly number[], { verify = false }: EnsureOptions = {}): Promise<void> {
    const wanted = new Map<string, Month>();
    for (const ms of times) {
      const month = monthOf(ms);
      if (verify || !this.#known.has(month.key)) wanted.set(month.key, month);
    }
    if (wanted.size === 0) return;
    try {
      const missing = verify ? await this.#missing([...wanted.values()]) : [...wanted.values()];
      if (missing.length > 0) await this.#create(missing);
    } catch (error) {
      this.options.log?.warn("partitions not made", {
        months: [...wanted.keys()],
        error: String(error),
      });
      throw error;
    }
    for (const key of wanted.keys()) this.#known.add(key);
  }

  /** The months of these whose partitions are not all in the catalogue. */
  async #missing(months: Month[]): Promise<Month[]> {
    const rows = await this.db.query<{ name: string }>(
      `select c.relname as name
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'ingest'
          and c.relname in (select json_array_elements_text($1::json))`,
      [JSON.stringify(months.flatMap(namesOf))],
    );
    const present = new Set(rows.map((r) => r.name));
    return months.filter((month) => !namesOf(month).every((name) => present.has(name)));
  }

  async #create(months: Month[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      // Replicas creating the same partition at once would collide; one at a time.
      await tx.query("select pg_advisory_xact_lock(hashtext('crm-ingest-partitions'))");
      for (const month of months) {
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
  }

  /** This month and the next MONTHS_AHEAD; a failure is logged (ensure) and thrown. */
  ensureAhead(now: number): Promise<void> {
    this.#checked = true;
    const months = [now];
    for (let i = 0; i < MONTHS_AHEAD; i++) months.push(monthOf(months[i]).to);
    return this.ensure(months);
  }

  /**
   * How many months after the current one have their partitions, counted
   * without a gap; undefined before the first check of the months ahead.
   */
  monthsAhead(now = (this.options.clock ?? systemClock).now()): number | undefined {
    if (!this.#checked) return undefined;
    let ahead = 0;
    for (let month = monthOf(monthOf(now).to); this.#known.has(month.key); ahead++) {
      month = monthOf(month.to);
    }
    return ahead;
  }

  /** Forgets what it knew (after retention dropped partitions). */
  forget(): void {
    this.#known.clear();
  }

  /** Stops counting in the gauge (the service closed). */
  close(): void {
    aheadGauge.remove(this);
  }
}
