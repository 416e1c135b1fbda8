/**
 * One empty PGlite cluster for the whole run: `test/global_setup.ts` makes
 * its files once (PGlite's initdb, 4 to 5 s on two busy cores) and keeps
 * them under node_modules/.cache, named by the PGlite version; every test
 * process that opens an in-memory store loads a copy (about 1 s) instead of
 * running initdb again. Without the file (a run that skipped the global
 * setup), every in-memory store runs initdb.
 */
import { emptyClusterFiles, startInMemoryFrom } from "../../services/lib/db/pglite.ts";

const ROOT = new URL("../..", import.meta.url);

async function pgliteVersion(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  return String(config.imports["@electric-sql/pglite"]).replace(/^npm:@electric-sql\/pglite@/, "");
}

async function templatePath(): Promise<string> {
  return new URL(
    `node_modules/.cache/crm-tests/pglite-${await pgliteVersion()}-empty.tar`,
    ROOT,
  ).pathname;
}

/** Makes the run's empty cluster unless this PGlite version's is there already. */
export async function makeEmptyClusterTemplate(): Promise<void> {
  const path = await templatePath();
  try {
    await Deno.stat(path);
    return;
  } catch { /* not made yet */ }
  const files = new Uint8Array(await (await emptyClusterFiles()).arrayBuffer());
  await Deno.mkdir(path.replace(/\/[^/]+$/, ""), { recursive: true });
  // Written aside and renamed, so a reader never meets half a file.
  const partial = `${path}.${Deno.pid}.partial`;
  await Deno.writeFile(partial, files);
  await Deno.rename(partial, path);
}

let loaded: Promise<void> | undefined;

/** In-memory stores of this process start from the run's empty cluster, when there is one. */
export function useEmptyClusterTemplate(): Promise<void> {
  loaded ??= (async () => {
    try {
      startInMemoryFrom(new Blob([await Deno.readFile(await templatePath())]));
    } catch { /* none: every store runs initdb */ }
  })();
  return loaded;
}
