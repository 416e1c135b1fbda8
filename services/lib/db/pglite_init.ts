/**
 * `deno run -A services/lib/db/pglite_init.ts FOLDER`: creates the embedded
 * store's files in FOLDER (PGlite's initdb) and exits. openPglite runs this
 * as a child process on a fresh data folder, while it holds the folder's
 * lock: initdb runs a second Postgres instance and copies its files, and the
 * memory that takes (about 450 MB) is given back to the system when this
 * process exits, instead of staying the server's peak for as long as it runs.
 */
import { PGlite } from "@electric-sql/pglite";
import { pgliteOptions } from "./pglite.ts";

if (import.meta.main) {
  const [folder] = Deno.args;
  if (!folder) {
    console.error("usage: pglite_init.ts FOLDER");
    Deno.exit(2);
  }
  const db = new PGlite(folder, pgliteOptions());
  await db.waitReady;
  await db.close();
}
