/** Ingest-service tables: site settings and event types. */
import type { Database } from "../lib/db/mod.ts";
import type { EventTypeDef, Manifest } from "../lib/manifest/types.ts";
import { syncWebhooks } from "../lib/webhooks/outbox.ts";
import { INGEST_SCHEMA } from "./migrations/mod.ts";
import { DROP_REASONS, type DropReason, NO_SHIELDS, type ShieldsDef } from "../lib/shields.ts";
import { importSegments } from "./segments_store.ts";

/** One dropped page view or event, counted by `admin stats dropped`. */
export interface Drop {
  siteId: string;
  reason: DropReason;
  atMs: number;
}
import { exportNotifications, syncNotifications } from "./mail/notifications.ts";

interface EventTypeRow {
  first_event_at?: Date | string | null;
  name: string;
  title: string;
  description: string;
  status: "active" | "archived";
  params: EventTypeDef["params"];
  brings_revenue: boolean;
  currency: string | null;
  position: number;
}

const toDef = (r: EventTypeRow): EventTypeDef => ({
  name: r.name,
  title: r.title,
  description: r.description,
  status: r.status,
  params: r.params,
  bringsRevenue: r.brings_revenue,
  currency: r.currency,
});

import type { SiteOfStats } from "./stats/service.ts";

export class IngestStore {
  constructor(private readonly db: Database) {}

  async eventTypes(siteId: string, status?: "active"): Promise<EventTypeDef[]> {
    const rows = await this.db.query<EventTypeRow & Record<string, unknown>>(
      `select name, title, description, status, params, brings_revenue, currency, position
         from ingest.event_types where site_id = $1 and ($2::text is null or status = $2)
        order by position`,
      [siteId, status ?? null],
    );
    return rows.map(toDef);
  }

  /** The site's own time zone, null while it has none, undefined when the site is unknown. */
  async siteTimeZone(siteId: string): Promise<string | null | undefined> {
    const [site] = await this.db.query<{ time_zone: string | null }>(
      "select time_zone from ingest.sites where site_id = $1",
      [siteId],
    );
    return site === undefined ? undefined : site.time_zone;
  }

  /** What the reports need of a site: its zone and declared event types, or undefined. */
  async statsSite(siteId: string): Promise<SiteOfStats | undefined> {
    const timeZone = await this.siteTimeZone(siteId);
    if (timeZone === undefined) return undefined;
    const types = await this.eventTypes(siteId);
    return {
      timeZone,
      eventNames: new Set(types.map((t) => t.name)),
      paramKeys: new Set(types.flatMap((t) => t.params.map((p) => p.key))),
    };
  }

  /** The site's shields (none while it has none). */
  async shields(siteId: string): Promise<ShieldsDef> {
    const [site] = await this.db.query<{ shields: ShieldsDef | null }>(
      "select shields from ingest.sites where site_id = $1",
      [siteId],
    );
    return site?.shields ?? NO_SHIELDS;
  }

  /** Adds drops to their counts, summed per site, reason and receive time. */
  async countDropped(drops: readonly Drop[]): Promise<void> {
    if (drops.length === 0) return;
    const sums = new Map<string, number>();
    for (const d of drops) {
      const key = JSON.stringify([d.siteId, d.reason, d.atMs]);
      sums.set(key, (sums.get(key) ?? 0) + 1);
    }
    const rows = [...sums].map(([key, count]) => {
      const [siteId, reason, atMs] = JSON.parse(key) as [string, string, number];
      return { s: siteId, r: reason, a: new Date(atMs).toISOString(), c: count };
    });
    await this.db.query(
      `insert into ingest.dropped_counts (site_id, reason, at, count)
       select s, r, a::timestamptz, c from json_to_recordset($1::json)
         as x(s text, r text, a text, c bigint)
       on conflict (site_id, reason, at)
         do update set count = ingest.dropped_counts.count + excluded.count`,
      [JSON.stringify(rows)],
    );
  }

  /** How many items the site's shields dropped, by reason, at or after sinceMs when given. */
  async droppedCounts(siteId: string, sinceMs?: number): Promise<Record<DropReason, number>> {
    const rows = await this.db.query<{ reason: string; n: string | number }>(
      `select reason, sum(count) as n from ingest.dropped_counts
        where site_id = $1 and ($2::text is null or at >= $2::timestamptz)
        group by reason`,
      [siteId, sinceMs === undefined ? null : new Date(sinceMs).toISOString()],
    );
    const counts = Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<
      DropReason,
      number
    >;
    for (const row of rows) {
      if ((DROP_REASONS as readonly string[]).includes(row.reason)) {
        counts[row.reason as DropReason] = Number(row.n);
      }
    }
    return counts;
  }

  async siteExists(siteId: string): Promise<boolean> {
    const rows = await this.db.query("select 1 from ingest.sites where site_id = $1", [siteId]);
    return rows.length > 0;
  }

  /** The members of the site manifest this service owns, as export-site prints them. */
  async exportPart(siteId: string): Promise<Record<string, unknown> | undefined> {
    const timeZone = await this.siteTimeZone(siteId);
    if (timeZone === undefined) return undefined;
    const notifications = await exportNotifications(this.db, siteId);
    const shields = await this.db.query<{ shields: ShieldsDef | null }>(
      "select shields from ingest.sites where site_id = $1",
      [siteId],
    );
    const segments = await this.db.query<{ name: string; filters: unknown }>(
      "select name, filters from ingest.segments where site_id = $1 order by name, id",
      [siteId],
    );
    return {
      site: { timeZone },
      eventTypes: await this.eventTypes(siteId),
      ...(shields[0]?.shields ? { shields: shields[0].shields } : {}),
      ...(segments.length ? { segments } : {}),
      ...(notifications ? { notifications } : {}),
    };
  }

  /**
   * Makes the site's time zone, event types and webhooks those of the manifest. A type
   * absent from the manifest is deleted when nothing was recorded under it,
   * and archived otherwise, so its name stays locked to its data. A type has
   * data once its first event was stored (first_event_at, set by the writer).
   */
  async importSite(manifest: Manifest, now: number): Promise<Record<string, number>> {
    const siteId = manifest.site.id;
    return await this.db.transaction(async (tx) => {
      const changes: Record<string, number> = {};
      const count = (what: string) => (changes[what] = (changes[what] ?? 0) + 1);
      const [site] = await tx.query<{ time_zone: string | null; name: string | null }>(
        "select time_zone, name from ingest.sites where site_id = $1 for update",
        [siteId],
      );
      if (!site) {
        await tx.query(
          `insert into ingest.sites (site_id, time_zone, name, created_at)
           values ($1, $2, $3, $4)`,
          [siteId, manifest.site.timeZone, manifest.site.name, new Date(now).toISOString()],
        );
        count("site");
      } else if (site.name !== manifest.site.name) {
        // The name only titles mails (auth-service keeps and exports the site's own).
        await tx.query("update ingest.sites set name = $2 where site_id = $1", [
          siteId,
          manifest.site.name,
        ]);
      }
      if (site && site.time_zone !== manifest.site.timeZone) {
        await tx.query(
          "update ingest.sites set time_zone = $2, updated_at = now() where site_id = $1",
          [
            siteId,
            manifest.site.timeZone,
          ],
        );
        count("site");
      }

      const rows = await tx.query<EventTypeRow & Record<string, unknown>>(
        `select name, title, description, status, params, brings_revenue, currency, position,
                first_event_at
           from ingest.event_types where site_id = $1 for update`,
        [siteId],
      );
      const existing = new Map(rows.map((r) => [r.name, JSON.stringify([toDef(r), r.position])]));
      const wanted = new Set(manifest.eventTypes.map((e) => e.name));
      for (const row of rows) {
        if (wanted.has(row.name)) continue;
        if (row.first_event_at !== null && row.first_event_at !== undefined) {
          if (row.status !== "archived") {
            await tx.query(
              "update ingest.event_types set status = 'archived', updated_at = now() where site_id = $1 and name = $2",
              [siteId, row.name],
            );
            count("eventTypesArchived");
          }
        } else {
          await tx.query("delete from ingest.event_types where site_id = $1 and name = $2", [
            siteId,
            row.name,
          ]);
          count("eventTypesRemoved");
        }
      }
      for (const [position, e] of manifest.eventTypes.entries()) {
        const before = existing.get(e.name);
        if (before === JSON.stringify([e, position])) continue;
        await tx.query(
          `insert into ingest.event_types
             (site_id, name, title, description, status, params, brings_revenue, currency, position)
           values ($1, $2, $3, $4, $5, $6::json, $7, $8, $9)
           on conflict (site_id, name) do update set
             title = excluded.title, description = excluded.description, status = excluded.status,
             params = excluded.params, brings_revenue = excluded.brings_revenue,
             currency = excluded.currency, position = excluded.position, updated_at = now()`,
          [
            siteId,
            e.name,
            e.title,
            e.description,
            e.status,
            JSON.stringify(e.params),
            e.bringsRevenue,
            e.currency,
            position,
          ],
        );
        count(before === undefined ? "eventTypesAdded" : "eventTypesChanged");
      }
      if (manifest.shields !== undefined) {
        const [stored] = await tx.query<{ shields: ShieldsDef | null }>(
          "select shields from ingest.sites where site_id = $1",
          [siteId],
        );
        if (JSON.stringify(stored?.shields ?? null) !== JSON.stringify(manifest.shields)) {
          await tx.query(
            "update ingest.sites set shields = $2::json, updated_at = now() where site_id = $1",
            [siteId, JSON.stringify(manifest.shields)],
          );
          count("shields");
        }
      }
      Object.assign(changes, await importSegments(tx, siteId, manifest.segments));
      // The webhooks too, for lead.created (export-site reads content-service's copy).
      const hooks = await syncWebhooks(tx, INGEST_SCHEMA, {
        siteId,
        webhooks: manifest.webhooks,
        now,
      });
      const notified = await syncNotifications(tx, {
        siteId,
        notifications: manifest.notifications,
        now,
      });
      return { ...changes, ...hooks, ...notified };
    });
  }
}
