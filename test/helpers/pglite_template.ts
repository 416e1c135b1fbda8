/**
 * One empty PGlite cluster for the whole run: `test/global_setup.ts` makes
 * its files once (PGlite's initdb, 4 to 5 s on two busy cores) and keeps
 * them under node_modules/.cache, named by the PGlite version; every test
 * process that opens an in-memory store loads a copy (about 1 s) instead of
 * running initdb again. Without the file (a run that skipped the global
 * setup), every in-memory store runs initdb.
 *
 * Beside it, a migrated cluster (`memory://migrated`): every service's
 * migrations applied once, where a store would otherwise apply them on
 * every open (several seconds in PGlite).
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

async function templatePath(kind: "empty" | "migrated"): Promise<string> {
  const name = kind === "empty" ? "empty" : await migratedTemplateName();
  return new URL(
    `node_modules/.cache/crm-tests/pglite-${await pgliteVersion()}-${name}.tar`,
    ROOT,
  ).pathname;
}

/** Writes the files at `path` unless they are there; aside and renamed, so a reader never meets half a file. */
async function keep(path: string, make: () => Promise<Blob>): Promise<void> {
  try {
    await Deno.stat(path);
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
  await keep(await templatePath("empty"), emptyClusterFiles);
  const migrated = await templatePath("migrated");
  const folder = migrated.replace(/\/[^/]+$/, "");
  for await (const entry of Deno.readDir(folder)) {
    const stale = /^pglite-.*-crm_tpl_[0-9a-f]+\.tar$/.test(entry.name) &&
      `${folder}/${entry.name}` !== migrated;
    if (stale) await Deno.remove(`${folder}/${entry.name}`).catch(() => {});
  }
  await useEmptyClusterTemplate();
  await keep(await templatePath("migrated"), () =>
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
