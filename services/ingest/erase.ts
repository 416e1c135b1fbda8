/**
 * Deleting one visitor's data at the site owner's request: the profile,
 * sessions, page views and events (with their idempotency ids), and the
 * leads only when asked. Events sent with a session id alone were given the
 * session's visitor when stored, so they go too.
 */
import type { Database, Queryable } from "../lib/db/mod.ts";
import { beforeErase, recomputeErased } from "./stats/visits.ts";

async function count(tx: Queryable, sql: string, params: string[]): Promise<number> {
  const [row] = await tx.query<{ deleted: number }>(
    `with gone as (${sql} returning 1) select count(*)::int as deleted from gone`,
    params,
  );
  return row.deleted;
}

export interface VisitorErasure {
  siteId: string;
  visitorId: string;
  /** The visitor's leads go too. */
  withLeads: boolean;
}

export async function deleteVisitor(
  db: Database,
  { siteId, visitorId, withLeads }: VisitorErasure,
): Promise<Record<string, number>> {
  return await db.transaction(async (tx) => {
    const ids = [siteId, visitorId];
    // The reports' derived tables change with the rows, in this transaction.
    await beforeErase(tx, siteId, visitorId, withLeads);
    const [events] = await tx.query<{ deleted: number; event_ids: number }>(
      `with gone as (
         delete from ingest.events where site_id = $1 and visitor_id = $2 returning event_id),
       ids as (
         delete from ingest.event_ids e using gone
          where e.site_id = $1 and e.event_id = gone.event_id returning 1)
       select (select count(*) from gone)::int as deleted,
              (select count(*) from ids)::int as event_ids`,
      ids,
    );
    const deleted: Record<string, number> = {
      pageViews: await count(
        tx,
        "delete from ingest.page_views where site_id = $1 and visitor_id = $2",
        ids,
      ),
      events: events.deleted,
      sessions: await count(
        tx,
        "delete from ingest.sessions where site_id = $1 and visitor_id = $2",
        ids,
      ),
      visitors: await count(
        tx,
        "delete from ingest.visitors where site_id = $1 and visitor_id = $2",
        ids,
      ),
    };
    deleted.leads = withLeads
      ? await count(tx, "delete from ingest.leads where site_id = $1 and visitor_id = $2", ids)
      : 0;
    await recomputeErased(tx);
    return deleted;
  });
}
