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
import { INGEST_SCHEMA, ingestMigrations } from "./migrations/mod.ts";
import { INGEST_BACKFILLS } from "./backfills.ts";
import { IngestStore } from "./storage.ts";
import { ingestAdminHandlers, ingestSitePart } from "./admin_handlers.ts";
import { ingestHandlers } from "./handlers.ts";
import { EventTypeCache } from "./event_types.ts";
import { ShieldCache } from "./shield_cache.ts";
import { GroupCommit } from "./group_commit.ts";
import { Partitions } from "./partitions.ts";
import { RetentionRecord } from "./retention.ts";
import { openGeo } from "./geo.ts";
import { bundledReferrers } from "./referrers.ts";
import type { WriteItem, WriteResult } from "./rows.ts";
import { writeGroup } from "./writer.ts";
import { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { StatsAnswerer, statsHandlers } from "./stats/service.ts";
import { segmentHandlers } from "./stats/segment_handlers.ts";
import { segmentsById } from "./segments_store.ts";
import { statsEngine } from "./stats/engine.ts";
import { RollupBuilder } from "./stats/rollup_builder.ts";
import { WebhookAdminService } from "../lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import { webhookAdminHandlers } from "../lib/webhooks/admin.ts";
import { WebhookWorker } from "../lib/webhooks/worker.ts";
import { MailAdminService } from "../lib/gen/crm/mail/v1/mail_pb.ts";
import { publicUrlOf } from "../lib/config.ts";
import { answerJson, queryBodyOf } from "../lib/stats/wire.ts";
import { MailWorker } from "./mail/worker.ts";
import { mailAdminHandlers } from "./mail/admin.ts";
import { smtpTransport } from "./mail/transport.ts";
import { responseOf } from "./stats/service.ts";

/** How often the partitions ahead are made and retention's last success is read. */
const UPKEEP_CHECK_MS = 60 * 60_000;
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
  keepDerived = true,
  timeoutMs = 3_000,
): GroupCommit<WriteItem, WriteResult> {
  return new GroupCommit<WriteItem, WriteResult>(
    (items) =>
      retrying(() =>
        db.transaction((tx) =>
          writeGroup(tx, items, { upkeep: keepDerived, endsTransaction: true })
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
/** How ingest-service runs beyond its settings: what a benchmark may change in-process. */
export interface IngestOptions {
  /**
   * False: the writer keeps none of the reports' derived tables (the visits)
   * and the rollups' builder does not run. Only `deno task bench ingest`
   * passes it, to measure what keeping them costs; reports are wrong until
   * `admin stats rebuild`. No setting of a deployment reaches it.
   */
  keepDerived?: boolean;
  /** How often email reports and traffic alerts are checked (a minute; tests shorten it). */
  mailCheckMs?: number;
}

export function ingestService(platform: Platform, options: IngestOptions = {}): ServiceDefinition {
  const keepDerived = options.keepDerived ?? true;
  const geo = openGeo(platform.config.geoipDb);
  const referrers = bundledReferrers();
  return {
    name: "ingest",
    schema: INGEST_SCHEMA,
    migrations: ingestMigrations,
    backfills: INGEST_BACKFILLS,
    services: [
      IngestService,
      IngestAdminService,
      SiteAdminService,
      StatsService,
      WebhookAdminService,
      MailAdminService,
    ],
    setup(context) {
      const store = new IngestStore(context.db);
      const types = new EventTypeCache(
        (siteId) => store.eventTypes(siteId, "active"),
        platform.bus,
        platform.clock,
      );
      const shields = new ShieldCache((siteId) => store.shields(siteId), {
        bus: platform.bus,
        clock: platform.clock,
        referrerBlocklist: platform.config.referrerBlocklist,
      });
      const log = context.platform.log;
      const partitions = new Partitions(context.db, { log, clock: platform.clock });
      const committer = groupCommitFor(context.db, keepDerived);
      // Delivers lead.created from this schema's outbox.
      const webhooks = new WebhookWorker({
        db: context.db,
        schema: INGEST_SCHEMA,
        clock: platform.clock,
        log,
        settings: platform.config.webhooks,
      });
      webhooks.start();
      const retention = new RetentionRecord(context.db);
      // Once the schema is current, then every hour: partitions for this month and the next
      // three, ahead of need (a failure is logged by ensure and counted by its gauge), and
      // retention's last success read again for its gauge (another replica may have run it).
      const upkeepCheck = async () => {
        await partitions.ensureAhead(platform.clock.now()).catch(() => {});
        await retention.refresh().catch((error) =>
          log.warn("retention's last success not read", { error: String(error) })
        );
      };
      let timer: ReturnType<typeof setInterval> | undefined;
      // The rollups of ended days and months (stats/rollup_builder.ts); queries are exact
      // without them, only slower.
      const rollups = keepDerived
        ? new RollupBuilder({ db: context.db, clock: platform.clock, log })
        : undefined;
      rollups?.start();
      // Email reports and traffic alerts, their numbers from the reports engine.
      const answerer = (db: Database) =>
        new StatsAnswerer({
          engine: statsEngine(db, { workMemMb: platform.config.statsWorkMemMb || undefined }),
          site: (siteId) => new IngestStore(db).statsSite(siteId),
          now: () => platform.clock.now(),
        });
      const { smtpUrl, from } = platform.config.mail;
      const mail = new MailWorker({
        db: context.db,
        clock: platform.clock,
        log,
        transport: smtpUrl ? smtpTransport(smtpUrl) : undefined,
        from,
        publicUrl: () => publicUrlOf(platform.config),
        stats: {
          answer: (siteId, body) =>
            context.reports.run(async (db) =>
              answerJson(responseOf(await answerer(db).query(siteId, queryBodyOf(body))))
            ),
          visitors: (siteId, window) =>
            context.reports.run(async (db) => {
              const answer = await answerer(db).window(
                siteId,
                queryBodyOf({ metrics: ["visitors"], date_range: "30m" }),
                window,
              );
              return Number(answer.rows[0]?.metrics[0] ?? 0);
            }),
          firstDataMs: (siteId) =>
            context.reports.run(async (db) =>
              (await statsEngine(db).extent(siteId, {}, false))?.first
            ),
        },
        webhooksEnqueued: () => webhooks.nudge(),
        checkMs: options.mailCheckMs,
      });
      mail.start();
      return {
        async ready() {
          await upkeepCheck();
          timer ??= setInterval(upkeepCheck, UPKEEP_CHECK_MS);
        },
        routes(router) {
          router.service(
            IngestService,
            ingestHandlers({
              types,
              partitions,
              committer,
              enrichment: { geo, referrers },
              clock: platform.clock,
              metricsPerSite: platform.config.metricsPerSite,
              leadsStored: () => webhooks.nudge(),
              shields,
              countDropped: (drops) => store.countDropped(drops),
            }),
          );
          router.service(
            IngestAdminService,
            ingestAdminHandlers(context, { store, partitions, retention }),
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
            MailAdminService,
            mailAdminHandlers({
              worker: mail,
              mailOn: smtpUrl !== undefined,
              siteExists: (siteId) => store.siteExists(siteId),
            }),
          );
          // Each call reads one snapshot on the reports' connections (the replica when set).
          router.service(StatsService, {
            ...statsHandlers((answer) =>
              context.reports.run((db) => {
                const siteStore = new IngestStore(db);
                const answerer = new StatsAnswerer({
                  engine: statsEngine(db, {
                    workMemMb: platform.config.statsWorkMemMb || undefined,
                  }),
                  site: (siteId) => siteStore.statsSite(siteId),
                  segments: async (siteId, ids) => {
                    const found = await segmentsById(db, siteId, ids);
                    return new Map([...found].map(([id, s]) => [id, s.filters]));
                  },
                  now: () => platform.clock.now(),
                });
                return answer(answerer, siteStore);
              })
            ),
            // Segments are read as reports are; written on the write path.
            ...segmentHandlers({ db: context.db, read: (fn) => context.reports.run(fn) }),
          });
        },
        async close() {
          clearInterval(timer);
          await rollups?.close(); // a round in progress stops after its current statement
          types.close();
          shields.close();
          await committer.drained();
          await mail.close();
          await webhooks.close();
          partitions.close();
          retention.close();
        },
      };
    },
  };
}

export function startIngestService(
  platform: Platform,
  listen: ListenOptions,
  options: IngestOptions = {},
): Promise<RunningService> {
  return runService(platform, ingestService(platform, options), listen);
}
