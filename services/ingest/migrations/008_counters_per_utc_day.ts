import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 8,
  name: "report counters per UTC day",
  // The quarter-hour counters summed per UTC day, kept with them in the same
  // transaction by the writer. A year read from the quarter hours is 35,000
  // buckets times the kinds, names and currencies (about 200,000 rows at ten
  // million page views); a query reads a whole UTC day that lies in one of its
  // buckets from here instead, and only the quarter hours of the days its
  // local buckets cut (the range's ends, a zone's month edges). Filled from
  // the quarter hours here; the key leads with site_id. Migration 17 drops
  // the table.
  sql: `
      create table ingest.stat_counter_days (
        site_id text not null,
        day timestamptz not null,
        bot boolean not null,
        kind smallint not null,
        name text not null,
        currency text not null,
        n bigint not null,
        valued bigint not null,
        revenue numeric not null,
        primary key (site_id, day, bot, kind, name, currency)
      );
      insert into ingest.stat_counter_days
        select site_id, date_bin('1 day', bucket, timestamptz 'epoch'), bot, kind, name, currency,
               sum(n), sum(valued), sum(revenue)
          from ingest.stat_counters group by 1, 2, 3, 4, 5, 6;
    `,
};
