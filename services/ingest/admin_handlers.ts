/** IngestAdminService: migrations and the analytics part of the manifest. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { Code, publicError } from "../lib/errors.ts";
import type { ServiceContext } from "../lib/service_runtime.ts";
import { parseManifestOrRefuse } from "../lib/manifest/refuse.ts";
import type { IngestStore } from "./storage.ts";
import type { EventTypeCache } from "./event_types.ts";
import { type ExportKind, exportPage } from "./exports.ts";
import { deleteVisitor } from "./erase.ts";
import { runRetention } from "./retention.ts";
import type { Partitions } from "./partitions.ts";

export interface AdminDeps {
  store: IngestStore;
  types: EventTypeCache;
  partitions: Partitions;
}

export function ingestAdminHandlers(
  context: ServiceContext,
  { store, types, partitions }: AdminDeps,
): ServiceImpl<typeof IngestAdminService> {
  const db = context.db;
  const requireSite = async (siteId: string) => {
    if (!(await store.siteExists(siteId))) {
      throw publicError(Code.NotFound, "site_not_found", { siteId });
    }
  };
  const page = async (
    kind: ExportKind,
    request: { siteId: string; sinceMs?: bigint; cursor: string; pageSize: number },
  ) => {
    await requireSite(request.siteId);
    let result;
    try {
      result = await exportPage(db, kind, request.siteId, {
        sinceMs: request.sinceMs === undefined ? undefined : Number(request.sinceMs),
        cursor: request.cursor,
        pageSize: request.pageSize,
      });
    } catch (error) {
      if ((error as Error).message === "malformed export cursor") {
        throw publicError(Code.InvalidArgument, "invalid_cursor");
      }
      throw error;
    }
    return { rowsJson: result.rows, nextCursor: result.nextCursor };
  };
  return {
    migrate: () => context.migrateRpc(),

    async importSite({ manifestJson, dryRun }) {
      const manifest = parseManifestOrRefuse(manifestJson);
      if (dryRun) return { siteId: manifest.site.id, changes: {} };
      const changes = await store.importSite(manifest);
      types.invalidate(manifest.site.id);
      return { siteId: manifest.site.id, changes };
    },

    async exportSite({ siteId }) {
      const part = await store.exportPart(siteId);
      if (!part) throw publicError(Code.NotFound, "site_not_found", { siteId });
      return { partJson: JSON.stringify(part) };
    },

    exportEvents: (request) => page("events", request),
    exportPageViews: (request) => page("page_views", request),
    exportLeads: (request) => page("leads", request),

    async deleteVisitor({ siteId, visitorId, leads }) {
      await requireSite(siteId);
      if (!visitorId) throw publicError(Code.InvalidArgument, "invalid_visitor_id");
      const deleted = await deleteVisitor(db, siteId, visitorId, leads);
      return {
        deleted: Object.fromEntries(Object.entries(deleted).map(([k, v]) => [k, BigInt(v)])),
      };
    },

    async runRetention({ retentionDays }) {
      const days = retentionDays ?? context.platform.config.retentionDays;
      if (days < 0) throw publicError(Code.InvalidArgument, "invalid_retention_days");
      const report = await runRetention(db, partitions, days);
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
  };
}
