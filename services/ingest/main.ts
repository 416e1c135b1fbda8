/** ingest-service wiring. */
import { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import type { Platform } from "../lib/platform.ts";
import { type ListenOptions, type RunningService, runService } from "../lib/service_runtime.ts";
import { INGEST_SCHEMA, ingestMigrations } from "./migrations.ts";
import { IngestStore } from "./storage.ts";
import { ingestAdminHandlers } from "./admin_handlers.ts";

export function startIngestService(
  platform: Platform,
  listen: ListenOptions,
): Promise<RunningService> {
  return runService(platform, {
    name: "ingest",
    schema: INGEST_SCHEMA,
    migrations: ingestMigrations,
    services: [IngestAdminService],
    setup(context) {
      const store = new IngestStore(context.db);
      return {
        routes(router) {
          router.service(IngestAdminService, ingestAdminHandlers(context, store));
        },
      };
    },
  }, listen);
}
