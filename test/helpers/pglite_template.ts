/**
 * One empty PGlite cluster for the whole run: `test/global_setup.ts` makes
 * its files once (PGlite's initdb, 4 to 5 s on two busy cores) and keeps
 * them in the user's cache folder (`~/.cache/crm-tests`), named by the
 * PGlite version; every test process that opens an in-memory store loads a
 * copy (about 1 s) instead of running initdb again. Without the file (a run
 * that skipped the global setup), every in-memory store runs initdb.
 *
 * Beside it, a migrated cluster (`memory://migrated`): every service's
 * migrations applied once, where a store would otherwise apply them on
 * every open (several seconds in PGlite).
 *
 * The files are named by what they hold, so every checkout of the machine
 * shares them, as the Postgres template is shared in its server: a new
 * clone's first run does not wait for them. A cluster no run used for a day
 * (of other migrations or another PGlite version) is removed; not at once,
 * since a run of other migrations may be using its own.
 */
import {
  emptyClusterFiles,
  preparedClusterFiles,
  startInMemoryFrom,
} from "../../services/lib/db/pglite.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { SCHEMAS } from "../../services/cli/schemas.ts";
import { migratedTemplateName } from "./migrated_template.ts";

const ROOT = new URL("../..", import.meta.url);

async function pgliteVersion(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  return String(config.imports["@electric-sql/pglite"]).replace(/^npm:@electric-sql\/pglite@/, "");
}

/** `$XDG_CACHE_HOME/crm-tests`, `~/.cache/crm-tests`, or the checkout's node_modules/.cache. */
function cacheFolder(): string {
  const home = Deno.env.get("HOME");
  const base = Deno.env.get("XDG_CACHE_HOME") ||
    (home ? `${home}/.cache` : new URL("node_modules/.cache", ROOT).pathname);
  return `${base}/crm-tests`;
}

async function templatePath(kind: "empty" | "migrated"): Promise<string> {
  const name = kind === "empty" ? "empty" : await migratedTemplateName();
  return `${cacheFolder()}/pglite-${await pgliteVersion()}-${name}.tar`;
}

const UNUSED_FOR_MS = 24 * 3600_000;

/**
 * Writes the files at `path` unless they are there (then marks them used);
 * aside and renamed, so a reader never meets half a file.
 */
async function keep(path: string, make: () => Promise<Blob>): Promise<void> {
  try {
    await Deno.stat(path);
    const now = new Date();
    await Deno.utime(path, now, now).catch(() => {});
    return;
  } catch { /* not made yet */ }
  const files = new Uint8Array(await (await make()).arrayBuffer());
  await Deno.mkdir(path.replace(/\/[^/]+$/, ""), { recursive: true });
  const partial = `${path}.${Deno.pid}.partial`;
  await Deno.writeFile(partial, files);
  await Deno.rename(partial, path);
}

/**
 * Makes the run's empty cluster unless this PGlite version's is there
 * already, and the migrated one (every service's migrations applied, named by
 * their fingerprint as the Postgres template is: helpers/migrated_template.ts).
 */
export async function makeClusterTemplates(): Promise<void> {
  const empty = await templatePath("empty");
  await keep(empty, emptyClusterFiles);
  const migrated = await templatePath("migrated");
  const folder = migrated.replace(/\/[^/]+$/, "");
  for await (const entry of Deno.readDir(folder)) {
    const path = `${folder}/${entry.name}`;
    const ours = /^pglite-.*\.tar(\.\d+\.partial)?$/.test(entry.name);
    if (!ours || path === migrated || path === empty) continue;
    const used = (await Deno.stat(path).catch(() => undefined))?.mtime?.getTime();
    if (used !== undefined && Date.now() - used > UNUSED_FOR_MS) {
      await Deno.remove(path).catch(() => {});
    }
  }
  await useEmptyClusterTemplate();
  await keep(migrated, () =>
    preparedClusterFiles(async (db) => {
      for (const { schema, migrations } of SCHEMAS) await migrate(db, schema, migrations);
    }));
}

let loaded: Promise<void> | undefined;
let migratedLoaded: Promise<boolean> | undefined;

/** In-memory stores of this process start from the run's empty cluster, when there is one. */
export function useEmptyClusterTemplate(): Promise<void> {
  loaded ??= (async () => {
    try {
      startInMemoryFrom(new Blob([await Deno.readFile(await templatePath("empty"))]));
    } catch { /* none: every store runs initdb */ }
  })();
  return loaded;
}

/**
 * The in-memory store `memory://migrated` of this process is ready to open:
 * true when the run made it; false leaves the empty cluster for `memory://`.
 */
export function useMigratedClusterTemplate(): Promise<boolean> {
  migratedLoaded ??= (async () => {
    await useEmptyClusterTemplate();
    try {
      const files = await Deno.readFile(await templatePath("migrated"));
      startInMemoryFrom(new Blob([files]), MIGRATED);
      return true;
    } catch {
      return false;
    }
  })();
  return migratedLoaded;
}

/** The name of the migrated in-memory cluster: `memory://migrated`. */
export const MIGRATED = "migrated";
