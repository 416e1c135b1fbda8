/**
 * `deno task admin CMD ...`: the operator's command line. It talks to the
 * services' admin RPCs (AUTH_URL, CONTENT_URL, INGEST_URL), never to the
 * public gateway, prints JSON on stdout, and on failure prints one line on
 * stderr and exits non-zero.
 */
import { type CommandIo, pathOf, processIo } from "./command_io.ts";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../lib/config.ts";
import { describeError } from "../lib/errors.ts";
import { ManifestError } from "../lib/manifest/validate.ts";
import { KeyKind } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { type AdminClients, adminClients, SITE_SERVICES } from "./admin_clients.ts";
import { exportManifest, importManifest } from "./site_manifest.ts";
import type { Config } from "../lib/config.ts";
import { openDatabase } from "../lib/db/mod.ts";
import { migrate } from "../lib/db/migrate.ts";
import { SCHEMAS } from "./schemas.ts";
import {
  exportCommand,
  historyCommand,
  retentionCommand,
  statsCommand,
  UsageError,
  visitorCommand,
} from "./analytics_commands.ts";
import { webhooksCommand } from "./webhook_commands.ts";
import { migrateStatus } from "./migrate_status.ts";
import { shareCommand } from "./share_commands.ts";
import { reportsCommand } from "./reports_command.ts";

const USAGE = `usage: deno task admin <command>
  import FILE                              upsert a site manifest
  export-site SITE_ID                      print a site's manifest (key hashes, not keys)
  key create SITE_ID --kind site|secret|report|preview
                                           create a key and print it once
  key revoke KEY                           revoke a key (or its sha256: hash)
  migrate                                  apply every service's pending migrations
  migrate --database                       the same, straight on DATABASE_URL, with no service
                                           running (the Helm chart's pre-install Job)
  migrate status [--database]              print each schema's applied, latest and pending
                                           migrations and its background backfills' progress
  events export SITE_ID [--since ISO]      print stored custom events as NDJSON, oldest first
  pageviews export SITE_ID [--since ISO]   print stored page views as NDJSON, oldest first
  leads export SITE_ID [--since ISO]       print stored leads as NDJSON, oldest first
  visitor delete SITE_ID VISITOR_ID [--leads]
                                           delete a visitor's profile, page views and events
                                           (and leads with --leads)
  retention run                            delete page views and events older than RETENTION_DAYS
  stats SITE_ID FILE                       print the answer of the reports query in FILE
  stats rebuild SITE_ID                    recompute a site's visits from its rows
                                           and print what changed
  stats dropped SITE_ID [--since ISO]      count what the site's shields dropped, by reason
  history import SITE_ID FILE              store the page views, events and leads of FILE (NDJSON
                                           in the exports' shape, with "kind"); prints the counts
  webhooks log SITE_ID [--since ISO]       print the site's webhook delivery attempts as
                                           NDJSON, oldest first
  share create SITE_ID [--expires ISO] [--password TEXT] [--label TEXT]
                                           create a read-only link to the site's reports
  share list SITE_ID                       print the site's share links (never passwords)
  share revoke ID                          revoke a share link
  reports send SITE_ID [--period week|month]
                                           send the site's email reports of the last complete
                                           period now, to recipients that have not had them`;

/** Answers what to print as JSON, or undefined when the command printed its own output. */
type Command = (
  clients: AdminClients,
  args: string[],
  config: Config,
  io: CommandIo,
) => Promise<unknown>;

function positional(args: string[], count: number, names: string): string[] {
  if (args.length !== count) throw new UsageError(`expected ${names}`);
  return args;
}

const KEY_KINDS: Record<string, KeyKind> = {
  site: KeyKind.SITE,
  secret: KeyKind.SECRET,
  report: KeyKind.REPORT,
  preview: KeyKind.PREVIEW,
};

const commands: Record<string, Command> = {
  async import(clients, args, _config, io) {
    const [file] = positional(args, 1, "FILE");
    const text = await Deno.readTextFile(pathOf(io, file)).catch((e) => {
      throw new UsageError(`cannot read ${file}: ${e.message}`);
    });
    return await importManifest(clients, text);
  },

  async "export-site"(clients, args) {
    const [siteId] = positional(args, 1, "SITE_ID");
    return await exportManifest(clients, siteId);
  },

  async key(clients, args) {
    const [action, ...rest] = args;
    if (action === "create") {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { kind: { type: "string" } },
        allowPositionals: true,
      });
      const [siteId] = positional(positionals, 1, "SITE_ID");
      const kind = KEY_KINDS[values.kind ?? ""];
      if (kind === undefined) {
        throw new UsageError("--kind must be site, secret, report or preview");
      }
      const created = await clients.auth.createKey({ siteId, kind });
      return { siteId, kind: values.kind, key: created.key, keyHash: created.keyHash };
    }
    if (action === "revoke") {
      const [key] = positional(rest, 1, "KEY");
      const revoked = await clients.auth.revokeKey({ key });
      return {
        keyHash: revoked.keyHash,
        siteId: revoked.siteId,
        alreadyRevoked: revoked.alreadyRevoked,
      };
    }
    throw new UsageError("key needs create or revoke");
  },

  async migrate(clients, args, config, io) {
    if (args[0] === "status") return await migrateStatus(clients, args.slice(1), config);
    if (args.length === 1 && args[0] === "--database") return await migrateDatabase(config, io);
    positional(args, 0, "no arguments, or --database");
    const out: Record<string, { applied: number[]; current: number }> = {};
    for (const name of SITE_SERVICES) {
      const result = await clients[name].migrate({});
      out[name] = { applied: result.appliedVersions, current: result.currentVersion };
    }
    return out;
  },

  events: (clients, args, _config, io) => exportCommand(clients, { what: "events", args, io }),
  pageviews: (clients, args, _config, io) =>
    exportCommand(clients, { what: "pageviews", args, io }),
  leads: (clients, args, _config, io) => exportCommand(clients, { what: "leads", args, io }),
  visitor: (clients, args) => visitorCommand(clients, args),
  retention: (clients, args, config) => retentionCommand(clients, args, config),
  stats: (clients, args, _config, io) => statsCommand(clients, args, io),
  history: (clients, args, _config, io) => historyCommand(clients, args, io),
  webhooks: (clients, args, _config, io) => webhooksCommand(clients, args, io),
  share: (clients, args, config) => shareCommand(clients, args, config.publicUrl),
  reports: (clients, args) => reportsCommand(clients, args),
};

/**
 * Runs one command and answers its exit code. The settings come from
 * `io.env` and the output goes to `io.stdout` and `io.stderr`: the process
 * passes its own (the default), a test may run it in its own process.
 */
export async function main(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [name, ...args] = argv;
  const command = name === undefined ? undefined : commands[name];
  const print = (text: string) => io.stdout.write(text + "\n");
  const fail = (line: string) => io.stderr.write(line + "\n");
  if (name === "help" || name === "--help") {
    await print(USAGE);
    return 0;
  }
  if (!command) {
    // A failure is one line; the list of commands is one `help` away.
    const what = name === undefined ? "a command is needed" : `unknown command "${name}"`;
    await fail(`${what} (deno task admin help lists the commands)`);
    return 2;
  }
  try {
    const config = loadConfig(io.env, "admin");
    const result = await command(adminClients(config), args, config, io);
    if (result !== undefined) await print(JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      await fail(`${name}: ${error.message}`);
      return 2;
    }
    if (error instanceof ConfigError) await fail(`configuration: ${error.message}`);
    else if (error instanceof ManifestError) {
      await fail(`invalid manifest at ${error.path}: ${error.problem}`);
    } else {
      const what = name === "key" || name === "share" || name === "reports"
        ? `${name} ${args[0]}`
        : name;
      await fail(`${what} failed: ${oneLine(error)}`);
    }
    return 1;
  }
}

/**
 * Every service's migrations applied from this process on DATABASE_URL: what
 * a deployment runs before the services of a new version start. Each
 * schema's migrations take the same advisory lock the services take, so a
 * service migrating at the same time waits.
 */
async function migrateDatabase(config: Config, io: CommandIo) {
  if (!config.databaseUrl) throw new UsageError("--database needs DATABASE_URL");
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const out: Record<string, { applied: number[]; current: number }> = {};
    for (const { service, schema, migrations } of SCHEMAS) {
      out[service] = await migrate(db, schema, migrations, {
        // One line per retry on stderr: the Job's log says what it waited for.
        onRetry: ({ what, attempt, waitMs, error }) =>
          void io.stderr.write(
            `${what}: lock not granted (try ${attempt}: ${oneLine(error)}); ` +
              `trying again in ${waitMs} ms\n`,
          ),
      });
    }
    return out;
  } finally {
    await db.close();
  }
}

function oneLine(error: unknown): string {
  return describeError(error).replace(/\s+/g, " ");
}

if (import.meta.main) Deno.exit(await main(Deno.args));
