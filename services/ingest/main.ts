/** ingest-service wiring. */
import { IngestAdminService, IngestService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { siteAdminHandlers } from "../lib/site_admin.ts";
import type { Platform } from "../lib/platform.ts";
import {
  type ListenOptions,
  type RunningService,
  runService,
  type ServiceDefinition,
} from "../lib/service_runtime.ts";
import type { Database } from "../lib/db/mod.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations.ts";
import { IngestStore } from "./storage.ts";
import { ingestAdminHandlers, ingestSitePart } from "./admin_handlers.ts";
import { ingestHandlers } from "./handlers.ts";
import { EventTypeCache } from "./event_types.ts";
import { GroupCommit } from "./group_commit.ts";
import { Partitions } from "./partitions.ts";
import { openGeo } from "./geo.ts";
import { bundledReferrers } from "./referrers.ts";
import type { WriteItem, WriteResult } from "./rows.ts";
import { writeGroup } from "./writer.ts";
import { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { statsHandlers } from "./stats/service.ts";
import { statsEngine } from "./stats/engine.ts";
import { buildAllRollups } from "./stats/rollups.ts";
import { WebhookAdminService } from "../lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import { webhookAdminHandlers } from "../lib/webhooks/admin.ts";
import { WebhookWorker } from "../lib/webhooks/worker.ts";

const PARTITION_CHECK_MS = 60 * 60_000;
/** How often the rollups of ended days and months, or stale ones, are built. */
const ROLLUP_BUILD_MS = 60_000;
/** Most items in one transaction, however many batches wait. */
const MAX_ITEMS_PER_COMMIT = 5_000;
const RETRYABLE = new Set(["40P01", "40001"]); // deadlock, serialization failure

/** Runs one transaction, again (up to twice more) when Postgres chose it as a deadlock victim. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 3 || !code || !RETRYABLE.has(code)) throw error;
    }
  }
}

export function groupCommitFor(
  db: Database,
  statsUpkeep = true,
  timeoutMs = 3_000,
): GroupCommit<WriteItem, WriteResult> {
  return new GroupCommit<WriteItem, WriteResult>(
    (items) =>
      retrying(() =>
        db.transaction((tx) =>
          writeGroup(tx, items, { upkeep: statsUpkeep, endsTransaction: true })
        )
      ),
    // PGlite is one connection; on Postgres a second transaction overlaps the first's commit.
    {
      maxConcurrent: db.kind === "pglite" ? 1 : 2,
      maxItems: MAX_ITEMS_PER_COMMIT,
      // Well below the gateway's 10 s deadline for ingest calls (a request
      // may wait behind a batch call before its own), so a database that
      // stopped answering is a 503 service_unavailable, not a 504.
      timeoutMs,
    },
  );
}

/**
 * ingest-service as a definition: its schema, the services it mounts and how
 * its handlers are built. `startIngestService` serves it on a port; a test may
 * route its handlers through an in-memory transport.
 */
export function ingestService(platform: Platform): ServiceDefinition {
  const geo = openGeo(platform.config.geoipDb);
  const referrers = bundledReferrers();
  return {
    name: "ingest",
    schema: INGEST_SCHEMA,
    migrations: ingestMigrations,
    services: [
      IngestService,
      IngestAdminService,
      SiteAdminService,
      StatsService,
      WebhookAdminService,
    ],
    setup(context) {
      const store = new IngestStore(context.db);
      const types = new EventTypeCache(
        (siteId) => store.eventTypes(siteId, "active"),
        platform.bus,
        platform.clock,
      );
      const partitions = new Partitions(context.db);
      const committer = groupCommitFor(context.db, platform.config.statsUpkeep);
      const log = context.platform.log;
      // Delivers lead.created from this schema's outbox.
      const webhooks = new WebhookWorker({
        db: context.db,
        schema: INGEST_SCHEMA,
        clock: platform.clock,
        log,
        settings: platform.config.webhooks,
      });
      webhooks.start();
      // Partitions for this month and the next, ahead of need (quietly until migrated).
      const ahead = () =>
        partitions.ensureAhead(platform.clock.now()).catch((error) =>
          log.debug("partitions", { error })
        );
      const timer = setInterval(ahead, PARTITION_CHECK_MS);
      // The rollups of ended days and months (stats/rollups.ts), one round at a time; queries
      // are exact without them, only slower.
      let building: Promise<void> | undefined;
      const stopBuilding = new AbortController();
      const buildRollups = () => {
        building ??= buildAllRollups(context.db, platform.clock.now(), stopBuilding.signal)
          .then(() => {}, (error) => log.warn("rollups", { error: String(error) }))
          .finally(() => (building = undefined));
      };
      const rollupTimer = platform.config.statsUpkeep
        ? setInterval(buildRollups, ROLLUP_BUILD_MS)
        : undefined;
      return {
        routes(router) {
          router.service(
            IngestService,
            ingestHandlers({
              types,
              partitions,
              committer,
              enrichment: { geo, referrers },
              clock: platform.clock,
              leadsStored: () => webhooks.nudge(),
            }),
          );
          router.service(
            IngestAdminService,
            ingestAdminHandlers(context, { store, partitions }),
          );
          router.service(
            SiteAdminService,
            siteAdminHandlers(context, ingestSitePart(store, platform.bus, platform.clock)),
          );
          router.service(
            WebhookAdminService,
            webhookAdminHandlers({
              db: context.db,
              schema: INGEST_SCHEMA,
              siteExists: (siteId) => store.siteExists(siteId),
            }),
          );
          router.service(
            StatsService,
            statsHandlers({
              engine: statsEngine(context.db, {
                workMemMb: platform.config.statsWorkMemMb || undefined,
              }),
              site: (siteId) => store.statsSite(siteId),
              now: () => platform.clock.now(),
            }, store),
          );
        },
        async close() {
          clearInterval(timer);
          clearInterval(rollupTimer);
          stopBuilding.abort(); // a build in progress stops after its current statement
          await building;
          types.close();
          await committer.drained();
          await webhooks.close();
        },
      };
    },
  };
}

export function startIngestService(
  platform: Platform,
  listen: ListenOptions,
): Promise<RunningService> {
  return runService(platform, ingestService(platform), listen);
}
