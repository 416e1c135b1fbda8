/**
 * ingest-service's operator side: its part of a site (time zone, event types)
 * for crm.admin.v1.SiteAdminService, and IngestAdminService (exports, visitor
 * deletion, retention, the rebuild of the reports' derived tables).
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { Code, publicError, siteNotFound } from "../lib/errors.ts";
import type { ServiceContext } from "../lib/service_runtime.ts";
import type { SitePart } from "../lib/site_admin.ts";
import type { IngestStore } from "./storage.ts";
import type { Bus } from "../lib/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { type ExportKind, exportPage } from "./exports.ts";
import { deleteVisitor } from "./erase.ts";
import { type RetentionRecord, runRetention } from "./retention.ts";
import { rebuildSite } from "./stats/visits.ts";
import {
  countsOf,
  HistoryLineError,
  type HistoryRecord,
  parseHistoryLine,
  storeHistory,
} from "./history.ts";
import { fieldProblem } from "../lib/errors.ts";
import type { Partitions } from "./partitions.ts";
import type { Manifest } from "../lib/manifest/types.ts";
import { invalidManifest } from "../lib/manifest/refuse.ts";
import { MAX_SEGMENTS } from "../lib/manifest/analytics_members.ts";
import { QueryError, segmentFilters } from "./stats/query.ts";
import { SegmentRefusal } from "./segments_store.ts";
import type { Json } from "../lib/stats/wire.ts";

export interface AdminDeps {
  store: IngestStore;
  partitions: Partitions;
  /** Retention's last success, for its gauge (told at once of a run made here). */
  retention?: RetentionRecord;
}

/**
 * The site's time zone and event types (the members site.timeZone and
 * eventTypes), and its webhooks, stored for lead.created but exported by
 * content-service.
 */
export function ingestSitePart(store: IngestStore, bus: Bus, clock: Clock): SitePart {
  return {
    check(manifest) {
      checkSegments(manifest);
      return Promise.resolve();
    },
    async apply(manifest) {
      checkSegments(manifest);
      let changes: Record<string, number>;
      try {
        changes = await store.importSite(manifest, clock.now());
      } catch (error) {
        if (error instanceof SegmentRefusal) {
          throw invalidManifest("$.segments", `a site has at most ${MAX_SEGMENTS} segments`);
        }
        throw error;
      }
      // Every replica's cached event types of the site go at once (this one's too).
      if (Object.keys(changes).length) {
        await bus.publish("event-types-changed", manifest.site.id);
      }
      return changes;
    },
    export: (siteId) => store.exportPart(siteId),
  };
}

/** The manifest's segments judged by the reports query's rules, against its own event types. */
function checkSegments(manifest: Manifest): void {
  const site = {
    paramKeys: new Set(manifest.eventTypes.flatMap((t) => t.params.map((p) => p.key))),
  };
  manifest.segments.forEach((segment, i) => {
    try {
      segmentFilters(segment.filters as Json, site, "filters");
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      const path = `$.segments[${i}].${error.field}`;
      throw invalidManifest(path, error.problem);
    }
  });
}

export function ingestAdminHandlers(
  context: ServiceContext,
  { store, partitions, retention }: AdminDeps,
): ServiceImpl<typeof IngestAdminService> {
  const db = context.db;
  const requireSite = async (siteId: string) => {
    if (!(await store.siteExists(siteId))) {
      throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
    }
  };
  const page = async <K extends ExportKind>(
    kind: K,
    request: { siteId: string; sinceMs?: bigint; cursor: string; pageSize: number },
  ) => {
    await requireSite(request.siteId);
    try {
      // A page is one report read: on the reports' connections, within REPORT_TIMEOUT_MS.
      return await context.reports.run((reads) =>
        exportPage(reads, {
          kind,
          siteId: request.siteId,
          sinceMs: request.sinceMs === undefined ? undefined : Number(request.sinceMs),
          cursor: request.cursor,
          pageSize: request.pageSize,
        })
      );
    } catch (error) {
      if ((error as Error).message === "malformed export cursor") {
        throw publicError(Code.InvalidArgument, "invalid_cursor");
      }
      throw error;
    }
  };
  return {
    async importHistory({ siteId, lines, firstLine, dryRun, lineNumbers }) {
      await requireSite(siteId);
      const target = {
        siteId,
        types: new Map((await store.eventTypes(siteId)).map((t) => [t.name, t])),
        nowMs: context.platform.clock.now(),
      };
      const records: HistoryRecord[] = [];
      for (const [i, line] of lines.entries()) {
        const number = Number(lineNumbers[i] ?? firstLine + BigInt(i));
        try {
          records.push(parseHistoryLine(line, number, target));
        } catch (error) {
          if (!(error instanceof HistoryLineError)) throw error;
          throw publicError(
            Code.InvalidArgument,
            "invalid_history",
            fieldProblem(`line ${error.line}`, error.problem),
          );
        }
      }
      const counts = dryRun || records.length === 0
        ? countsOf(records)
        : await storeHistory(db, records, partitions);
      return {
        pageviews: BigInt(counts.pageviews),
        events: BigInt(counts.events),
        leads: BigInt(counts.leads),
        skipped: BigInt(counts.skipped),
      };
    },

    async droppedCounts({ siteId, sinceMs }) {
      await requireSite(siteId);
      const counts = await store.droppedCounts(
        siteId,
        sinceMs === undefined ? undefined : Number(sinceMs),
      );
      return {
        ip: BigInt(counts.ip),
        country: BigInt(counts.country),
        page: BigInt(counts.page),
        referrer: BigInt(counts.referrer),
      };
    },

    exportEvents: (request) => page("events", request),
    exportPageViews: (request) => page("page_views", request),
    exportLeads: (request) => page("leads", request),

    async deleteVisitor({ siteId, visitorId, leads }) {
      await requireSite(siteId);
      if (!visitorId) throw publicError(Code.InvalidArgument, "invalid_visitor_id");
      const deleted = await deleteVisitor(db, { siteId, visitorId, withLeads: leads });
      return {
        deleted: Object.fromEntries(Object.entries(deleted).map(([k, v]) => [k, BigInt(v)])),
      };
    },

    async runRetention({ retentionDays }) {
      const days = retentionDays ?? context.platform.config.retentionDays;
      if (days < 0) throw publicError(Code.InvalidArgument, "invalid_retention_days");
      const now = context.platform.clock.now();
      const report = await runRetention(db, { partitions, retentionDays: days, now });
      retention?.succeeded(now);
      return {
        retentionDays: report.retentionDays,
        cutoffMs: BigInt(report.cutoffMs),
        droppedPartitions: report.droppedPartitions,
        deletedRows: Object.fromEntries(
          Object.entries(report.deletedRows).map(([k, v]) => [k, BigInt(v)]),
        ),
        elapsedMs: BigInt(report.elapsedMs),
      };
    },

    async rebuildStats({ siteId }) {
      await requireSite(siteId);
      const started = performance.now();
      const changes = await db.transaction((tx) => rebuildSite(tx, siteId));
      return {
        siteId,
        tables: changes.map((c) => ({
          table: c.table,
          added: BigInt(c.added),
          removed: BigInt(c.removed),
          changed: BigInt(c.changed),
        })),
        elapsedMs: BigInt(Math.round(performance.now() - started)),
      };
    },
  };
}
