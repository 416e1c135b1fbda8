/**
 * `admin migrate status [--database]`: where each service's schema stands
 * (applied and latest version, pending migrations) and how far its
 * background backfills are, from the services' admin RPCs, or with
 * `--database` straight from DATABASE_URL with no service running.
 */
import type { Config } from "../lib/config.ts";
import { openDatabase } from "../lib/db/mod.ts";
import { schemaVersion } from "../lib/db/migrate.ts";
import { type BackfillState, backfillStates, progressOf } from "../lib/db/backfill.ts";
import { type AdminClients, SITE_SERVICES } from "./admin_clients.ts";
import { SCHEMAS } from "./schemas.ts";
import { UsageError } from "./analytics_commands.ts";

export interface BackfillStatus {
  name: string;
  doneRows: number;
  totalRows: number | null;
  /** Share done, 0 to 1. */
  progress: number;
  startedAt: string | null;
  updatedAt: string | null;
  finishedAt: string | null;
}

export interface SchemaStatus {
  schema: string;
  current: number;
  latest: number;
  /** Migrations not applied yet. */
  pending: number;
  backfills: BackfillStatus[];
}

const orNull = (text: string | undefined) => text ? text : null;

function backfillStatus(state: BackfillState): BackfillStatus {
  return {
    name: state.name,
    doneRows: state.doneRows,
    totalRows: state.totalRows ?? null,
    progress: progressOf(state),
    startedAt: orNull(state.startedAt),
    updatedAt: orNull(state.updatedAt),
    finishedAt: orNull(state.finishedAt),
  };
}

export async function migrateStatus(
  clients: AdminClients,
  args: string[],
  config: Config,
): Promise<Record<string, SchemaStatus>> {
  if (args.length === 1 && args[0] === "--database") return await statusOfDatabase(config);
  if (args.length !== 0) throw new UsageError("migrate status takes no arguments, or --database");
  const out: Record<string, SchemaStatus> = {};
  for (const name of SITE_SERVICES) {
    const status = await clients[name].migrationStatus({});
    out[name] = {
      schema: status.schema,
      current: status.currentVersion,
      latest: status.latestVersion,
      pending: Math.max(0, status.latestVersion - status.currentVersion),
      backfills: status.backfills.map((b) => ({
        name: b.name,
        doneRows: Number(b.doneRows),
        totalRows: b.totalRows === undefined ? null : Number(b.totalRows),
        progress: b.progress,
        startedAt: orNull(b.startedAt),
        updatedAt: orNull(b.updatedAt),
        finishedAt: orNull(b.finishedAt),
      })),
    };
  }
  return out;
}

async function statusOfDatabase(config: Config): Promise<Record<string, SchemaStatus>> {
  if (!config.databaseUrl) throw new UsageError("--database needs DATABASE_URL");
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const out: Record<string, SchemaStatus> = {};
    for (const { service, schema, migrations } of SCHEMAS) {
      const current = await schemaVersion(db, schema);
      out[service] = {
        schema,
        current,
        latest: migrations.length,
        pending: Math.max(0, migrations.length - current),
        backfills: (await backfillStates(db, schema)).map(backfillStatus),
      };
    }
    return out;
  } finally {
    await db.close();
  }
}
