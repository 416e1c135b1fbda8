/**
 * A private Postgres primary and a real streaming standby of it, made with
 * Debian's Postgres binaries (/usr/lib/postgresql/VERSION/bin, the `postgresql`
 * package): `initdb` with `wal_level=replica`, then `pg_basebackup -R` and the
 * standby started in hot standby. Both listen on free loopback ports with
 * their data under /tmp, run as the `postgres` user when this process is
 * root (Postgres refuses root), and are stopped and removed by `stop()`. The
 * machine's own cluster is never touched.
 */
import { join } from "node:path";
import postgres from "postgres";
import { freePort } from "./ports.ts";
import { TOOLS_REQUIRED } from "./tools.ts";

/** The bin folder of the newest Postgres installed from Debian's packages that has pg_basebackup. */
export function postgresBin(): string | undefined {
  let versions: string[] = [];
  try {
    versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name);
  } catch { /* none installed */ }
  const found = versions
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => `/usr/lib/postgresql/${v}/bin`)
    .find((bin) => exists(join(bin, "pg_basebackup")) && exists(join(bin, "initdb")));
  if (!found && TOOLS_REQUIRED) {
    throw new Error(
      "Postgres server binaries are required (CRM_REQUIRE_TOOLS=1) but /usr/lib/postgresql/*/bin " +
        "has no initdb and pg_basebackup: install Debian's postgresql package (.ci/run does)",
    );
  }
  return found;
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

export interface ReplicaPair {
  /** The primary's URL (database `crm`). */
  primaryUrl: string;
  /** The standby's URL (the same database, read-only). */
  standbyUrl: string;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  /** Stops the primary (fast shutdown); the standby stays up, serving reads. */
  stopPrimary(): Promise<void>;
  startPrimary(): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = Deno.uid() === 0;

/** Runs a Postgres binary as the postgres user (or as this user when not root). */
async function run(bin: string, tool: string, args: string[]): Promise<string> {
  const command = asRoot
    ? new Deno.Command("runuser", { args: ["-u", "postgres", "--", join(bin, tool), ...args] })
    : new Deno.Command(join(bin, tool), { args });
  const { code, stdout, stderr } = await command.output();
  const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`${tool} ${args.join(" ")} failed (${code}): ${out}`);
  return out;
}

export async function startReplicaPair(bin: string): Promise<ReplicaPair> {
  const root = await Deno.makeTempDir({ prefix: "crm-replica-" });
  if (asRoot) {
    await new Deno.Command("chown", { args: ["postgres:postgres", root] }).output();
  }
  const primary = join(root, "primary");
  const standby = join(root, "standby");
  const primaryPort = freePort();
  const standbyPort = freePort();
  const ctl = (dir: string, ...args: string[]) =>
    run(bin, "pg_ctl", ["-D", dir, "-l", `${dir}.log`, "-w", "-t", "60", ...args]);
  const running: string[] = [];
  const stop = async () => {
    for (const dir of running.splice(0).reverse()) {
      await ctl(dir, "-m", "immediate", "stop").catch(() => {});
    }
    await Deno.remove(root, { recursive: true }).catch(() => {});
  };
  try {
    await run(bin, "initdb", ["-D", primary, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
    await Deno.writeTextFile(
      join(primary, "postgresql.conf"),
      [
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        "wal_level = replica",
        "max_wal_senders = 4",
        "hot_standby = on",
        // Reports on the standby are not cancelled by the replay of what they read.
        "hot_standby_feedback = on",
        "max_connections = 100",
        "fsync = off",
        "",
      ].join("\n"),
      { append: true },
    );
    await ctl(primary, "start");
    running.push(primary);
    const admin = postgres(`postgres://postgres@127.0.0.1:${primaryPort}/postgres`, {
      max: 1,
      onnotice: () => {},
    });
    await admin.unsafe("create database crm");
    await admin.end();

    await run(bin, "pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(primaryPort),
      "-U",
      "postgres",
      "-D",
      standby,
      "-R",
      "-X",
      "stream",
      // At once: the default spreads the backup's checkpoint over minutes of an idle primary.
      "--checkpoint=fast",
    ]);
    await Deno.writeTextFile(join(standby, "postgresql.auto.conf"), `port = ${standbyPort}\n`, {
      append: true,
    });
    await ctl(standby, "start");
    running.push(standby);
  } catch (error) {
    await stop();
    throw error;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/crm`;
  const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/crm`;
  return {
    primaryUrl,
    standbyUrl,
    async caughtUp() {
      const p = postgres(primaryUrl, { max: 1, onnotice: () => {} });
      const s = postgres(standbyUrl, { max: 1, onnotice: () => {} });
      try {
        const [{ lsn }] = await p`select pg_current_wal_lsn()::text as lsn`;
        for (let i = 0; i < 600; i++) {
          const [{ behind }] = await s`
            select pg_wal_lsn_diff(${lsn}::pg_lsn, pg_last_wal_replay_lsn()) > 0 as behind`;
          if (!behind) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`the standby did not replay up to ${lsn} within 30 s`);
      } finally {
        await p.end({ timeout: 1 });
        await s.end({ timeout: 1 });
      }
    },
    stopPrimary: () => ctl(primary, "-m", "fast", "stop").then(() => {}),
    startPrimary: () => ctl(primary, "start").then(() => {}),
    stop,
  };
}
