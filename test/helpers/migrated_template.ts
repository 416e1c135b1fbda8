/**
 * One Postgres database per run with every service's migrations applied,
 * marked as a template: a test that starts the whole system gets a copy of
 * it (`create database … template …`, about 0.2 s) instead of applying some
 * forty migrations on an empty database (about 2.5 s on two cores). The copy
 * is what a new installation holds once its migrations ran, since no
 * migration depends on the time it runs at; the system's start still checks
 * the versions and makes its partitions as on any installation.
 *
 * The template's name carries a fingerprint of the migrations and of the
 * code that applies them, so a changed migration makes a new template and an
 * old one is never used for it.
 */
import { openPostgres } from "../../services/lib/db/postgres.ts";
import { migrate } from "../../services/lib/db/migrate.ts";
import { SCHEMAS } from "../../services/cli/schemas.ts";
import { DATABASE_URL, uniqueId } from "./env.ts";
import { adminConnection } from "./run_databases.ts";

const ROOT = new URL("../../", import.meta.url);

/** Where the migrations and the code that applies them live. */
const SOURCES = [
  "services/auth/migrations",
  "services/content/migrations",
  "services/ingest/migrations",
  "services/lib/db/migrate.ts",
  "services/lib/db/backfill.ts",
  "services/lib/webhooks",
];

async function filesUnder(path: string): Promise<string[]> {
  const url = new URL(path, ROOT);
  const info = await Deno.stat(url);
  if (info.isFile) return [path];
  const found: string[] = [];
  for await (const entry of Deno.readDir(url)) {
    if (entry.name.endsWith("_test.ts")) continue;
    found.push(...await filesUnder(`${path}/${entry.name}`));
  }
  return found;
}

let name: Promise<string> | undefined;

/** `crm_tpl_` and the first 16 hex digits of the sources' SHA-256. */
export function migratedTemplateName(): Promise<string> {
  name ??= (async () => {
    const paths = (await Promise.all(SOURCES.map(filesUnder))).flat().sort();
    const contents = await Promise.all(paths.map((path) => Deno.readTextFile(new URL(path, ROOT))));
    const text = paths.map((path, i) => `${path}\n${contents[i]}`).join("\n");
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
    );
    const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    return `crm_tpl_${hex.slice(0, 16)}`;
  })();
  return name;
}

/**
 * Makes this run's template unless it exists, and drops templates of other
 * migrations. Safe when two runs start at once: each migrates a database of
 * its own and renames it; the one that loses the rename drops its copy.
 */
export async function ensureMigratedTemplate(): Promise<string> {
  const template = await migratedTemplateName();
  const sql = adminConnection();
  try {
    const stale = await sql<{ datname: string }[]>`
      SELECT datname FROM pg_database
      WHERE datname LIKE 'crm\\_tpl\\_%' AND datname <> ${template} AND datistemplate`;
    for (const { datname } of stale) {
      await sql.unsafe(`alter database ${datname} with is_template false`);
      await sql.unsafe(`drop database if exists ${datname} with (force)`);
    }
    const [exists] = await sql`
      SELECT 1 FROM pg_database WHERE datname = ${template} AND datistemplate`;
    if (exists) return template;
    const building = uniqueId(`${template}_`);
    await sql.unsafe(`create database ${building}`);
    try {
      const url = new URL(DATABASE_URL!);
      url.pathname = `/${building}`;
      const db = await openPostgres(url.toString(), { poolSize: 1 });
      try {
        for (const { schema, migrations } of SCHEMAS) await migrate(db, schema, migrations);
      } finally {
        await db.close();
      }
      await sql.unsafe(`alter database ${building} rename to ${template}`);
    } catch (error) {
      await sql.unsafe(`drop database if exists ${building} with (force)`);
      const [made] = await sql`SELECT 1 FROM pg_database WHERE datname = ${template}`;
      if (!made) throw error;
      return template;
    }
    // No connections: `create database … template` refuses a template someone is connected to.
    await sql.unsafe(`alter database ${template} with is_template true allow_connections false`);
    return template;
  } finally {
    await sql.end();
  }
}
