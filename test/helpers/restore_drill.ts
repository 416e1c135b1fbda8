/**
 * docs/upgrades.md's "Restoring a dump, step by step", as the real-node test
 * runs it on a live release: each step below is that step's commands, with
 * `admin` for `deno task admin` pointed at the release (NodeRelease.adminScript).
 * Files go to `dir`; SITE is one site.
 */
import { type NodeRelease, PG_BIN } from "./node_release.ts";
import { runCommand } from "./process.ts";

async function run(command: string, args: string[]): Promise<string> {
  const out = await runCommand(`${PG_BIN}/${command}`, args);
  if (out.code !== 0) throw new Error(`${command} ${args.join(" ")}: ${out.stderr}`);
  return out.stdout;
}

/** The backup: `pg_dump --format=custom`; resolves when it is written. */
export async function dump(databaseUrl: string, file: string): Promise<void> {
  await run("pg_dump", ["--format=custom", `--file=${file}`, databaseUrl]);
}

/** BACKUP_START: when the dump began, as `pg_restore --list` prints it (whole seconds, UTC). */
export async function backupStart(file: string): Promise<Date> {
  const listing = await run("pg_restore", ["--list", file]);
  const at = listing.match(/Archive created at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/);
  if (!at) throw new Error(`no "Archive created at" in pg_restore --list:\n${listing}`);
  return new Date(`${at[1].replace(" ", "T")}Z`);
}

export interface Drill {
  release: NodeRelease;
  /** The admin token of the installation (old and restored alike). */
  token: string;
  site: string;
  dir: string;
  /** `YYYY-MM-DD HH:MM:SS UTC`, what the dump's listing says. */
  backupStart: Date;
}

const utc = (d: Date) => d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

/** Step 1: while the old installation answers, what it did after the backup. */
export async function keepWhatTheOldDid(drill: Drill): Promise<void> {
  await drill.release.adminScript(
    `cd "$3"
    SINCE=$(date -u -d "$2 5 minutes ago" +%Y-%m-%dT%H:%M:%SZ)
    admin webhooks log "$1" --since "$SINCE" >> webhooks-sent.ndjson
    admin export-site "$1" > "site-$1.old.json"
    admin events export "$1" --since "$SINCE" | sed 's/^{/{"kind":"event",/' > "history-$1.ndjson"
    admin leads export "$1" --since "$SINCE" | sed 's/^{/{"kind":"lead",/' >> "history-$1.ndjson"`,
    drill.token,
    [drill.site, utc(drill.backupStart), drill.dir],
  );
}

/**
 * Step 2: a fresh database `db` on the server of `serverUrl`, the dump
 * restored into it, and the old installation's page views after the last one
 * it holds. Resolves with the new database's URL.
 */
export async function restoreInto(
  drill: Drill,
  dumpFile: string,
  serverUrl: string,
  db: string,
): Promise<string> {
  const server = new URL(serverUrl);
  const newUrl = `postgres://${server.username}@${server.host}/${db}`;
  await drill.release.adminScript(
    `cd "$6"
    createdb -h "$3" -p "$4" -U "$5" "$2"
    pg_restore --no-owner --no-privileges --exit-on-error --dbname="$7" "$8"
    AFTER=$(psql "$7" -tAc "select to_char(coalesce(max(received_at) + interval '1 ms', timestamptz '$9') at time zone 'UTC', 'YYYY-MM-DD\\"T\\"HH24:MI:SS.MS\\"Z\\"') from ingest.page_views where site_id = '$1'")
    admin pageviews export "$1" --since "$AFTER" | sed 's/^{/{"kind":"pageview",/' >> "history-$1.ndjson"`,
    drill.token,
    [
      drill.site,
      db,
      server.hostname,
      server.port,
      server.username,
      drill.dir,
      newUrl,
      dumpFile,
      utc(drill.backupStart),
    ],
  );
  return newUrl;
}

/** Step 3: the deliveries the old installation made since, marked; psql's output. */
export async function markWebhooksSent(drill: Drill, newUrl: string): Promise<string> {
  const script = new URL("../../deploy/restore/webhooks_sent.sql", import.meta.url).pathname;
  return await drill.release.adminScript(
    `psql "$1" -v ON_ERROR_STOP=1 -f "$2" < "$3/webhooks-sent.ndjson"`,
    drill.token,
    [newUrl, script, drill.dir],
  );
}

/** Step 4: the release switched to the restored database (helm upgrade --reuse-values). */
export async function switchTo(drill: Drill, newUrl: string): Promise<void> {
  await drill.release.helm([
    "upgrade",
    drill.release.name,
    "helm/crm",
    "--reuse-values",
    "--set",
    `global.postgres.url=${newUrl}`,
    "--wait",
    "--timeout",
    "5m",
  ]);
}

/** Step 6: the gateways restarted, the Redis keys under the prefix deleted. */
export async function dropCaches(drill: Drill, redisUrl: string, prefix = "crm:"): Promise<void> {
  const { release } = drill;
  const deployment = `deployment/${release.name}-gateway`;
  await release.kubectl(["-n", release.namespace, "rollout", "restart", deployment]);
  await release.kubectl(["-n", release.namespace, "rollout", "status", deployment]);
  await drill.release.adminScript(
    `redis-cli -u "$1" --scan --pattern "$2*" | xargs -r redis-cli -u "$1" del >/dev/null`,
    drill.token,
    [redisUrl, prefix],
  );
}

/** Step 5: the keys the restored site lists and the old one no longer does, revoked; their hashes. */
export async function revokeAgain(drill: Drill): Promise<string[]> {
  const out = await drill.release.adminScript(
    `cd "$2"
    admin export-site "$1" > "site-$1.new.json"
    jq -r --slurpfile old "site-$1.old.json" \\
      'def site_keys: (.siteKeys // []) + (.secretKeys // []) + (.reportKeys // []); site_keys - ($old[0] | site_keys) | .[]' \\
      "site-$1.new.json" > revoke.txt
    while read -r key; do admin key revoke "$key" > /dev/null; done < revoke.txt
    cat revoke.txt`,
    drill.token,
    [drill.site, drill.dir],
  );
  return out.split("\n").filter(Boolean);
}

/** Step 7: what the old installation stored after the backup, imported; the import's answer. */
export async function importHistory(drill: Drill): Promise<Record<string, number>> {
  const out = await drill.release.adminScript(
    `admin history import "$1" "$2/history-$1.ndjson"`,
    drill.token,
    [drill.site, drill.dir],
  );
  return JSON.parse(out);
}

/** The Redis keys under `prefix`. */
export async function redisKeys(redisUrl: string, prefix: string): Promise<string[]> {
  const out = await runCommand("redis-cli", ["-u", redisUrl, "--scan", "--pattern", `${prefix}*`]);
  if (out.code !== 0) throw new Error(`redis-cli --scan: ${out.stderr}`);
  return out.stdout.split("\n").filter(Boolean);
}
