/**
 * CREATE INDEX CONCURRENTLY as a migration outside a transaction runs it:
 * built while the table takes writes, safe to run again, and on partitioned
 * tables too, where Postgres refuses CONCURRENTLY.
 *
 * - A concurrent build that failed (a lock not granted in time, a duplicate
 *   for a unique index) leaves an invalid index of its name, which IF NOT
 *   EXISTS would then take as built: it is dropped (concurrently) first.
 * - On a partitioned table the index is made on the parent alone (ON ONLY:
 *   no rows read, invalid until complete), built concurrently on each
 *   partition and attached to it; once every partition's is attached the
 *   parent's is valid, and partitions made later get theirs when they are
 *   made.
 * - The embedded store is one connection: no one writes meanwhile, so the
 *   index is built plainly.
 */
import type { Queryable } from "./mod.ts";
import type { Statement } from "./sql_statements.ts";

const CREATE =
  /^create\s+(unique\s+)?index\s+concurrently\s+(?:if\s+not\s+exists\s+)?([a-z_]\w*)\s+on\s+(only\s+)?(?:([a-z_]\w*)\.)?([a-z_]\w*)\s+(.+)$/is;

interface IndexStatement {
  unique: boolean;
  name: string;
  schema: string;
  table: string;
  /** What follows the table: the method, the keys, INCLUDE, WHERE, ... */
  definition: string;
}

/** The parts of a CREATE INDEX CONCURRENTLY statement, or undefined for any other statement. */
export function parseConcurrentIndex(
  statement: Statement,
  defaultSchema: string,
): IndexStatement | undefined {
  if (!CREATE.test(statement.code)) return undefined;
  // The text, not the code, keeps the definition's literals (a partial index's WHERE).
  const text = statement.text.replace(/^(?:\s*(?:--[^\n]*\n|\/\*[\s\S]*?\*\/))*\s*/, "");
  const match = text.match(CREATE);
  if (!match) throw new Error(`cannot read the index statement: ${statement.code}`);
  const [, unique, name, only, schema, table, definition] = match;
  if (only) {
    throw new Error(`CONCURRENTLY cannot build an index ON ONLY a table: ${statement.code}`);
  }
  return {
    unique: !!unique,
    name: name.toLowerCase(),
    schema: (schema ?? defaultSchema).toLowerCase(),
    table: table.toLowerCase(),
    definition: definition.trim(),
  };
}

/**
 * Runs statement when it is a CREATE INDEX CONCURRENTLY, as said above, and
 * answers true; false for any other statement, which the caller runs.
 */
export async function createIndexConcurrently(
  connection: Queryable,
  kind: "postgres" | "pglite",
  defaultSchema: string,
  statement: Statement,
): Promise<boolean> {
  const index = parseConcurrentIndex(statement, defaultSchema);
  if (!index) return false;
  const { unique, name, schema, table, definition } = index;
  const create = `create ${unique ? "unique " : ""}index`;
  if (kind === "pglite") {
    await connection.exec(`${create} if not exists ${name} on ${schema}.${table} ${definition}`);
    return true;
  }
  const [relation] = await connection.query<{ kind: string }>(
    `select c.relkind::text as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = $2`,
    [schema, table],
  );
  if (!relation) throw new Error(`no table ${schema}.${table} to index`);
  if (relation.kind !== "p") {
    await dropInvalid(connection, schema, name);
    await connection.exec(
      `${create} concurrently if not exists ${name} on ${schema}.${table} ${definition}`,
    );
    return true;
  }
  await connection.exec(`${create} if not exists ${name} on only ${schema}.${table} ${definition}`);
  const partitions = await connection.query<{ relname: string; kind: string; attached: boolean }>(
    `select c.relname as relname, c.relkind::text as kind,
            exists (
              select 1 from pg_inherits ii join pg_index x on x.indexrelid = ii.inhrelid
               where ii.inhparent = to_regclass($2)::oid and x.indrelid = c.oid
            ) as attached
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass($1)::oid
      order by c.relname`,
    [`${schema}.${table}`, `${schema}.${name}`],
  );
  for (const { relname: partition, kind: partitionKind, attached } of partitions) {
    if (attached) continue;
    if (partitionKind === "p") {
      throw new Error(`${schema}.${partition} is partitioned again: index it in its own statement`);
    }
    const own = `${partition}_${name}`.slice(0, 63);
    await dropInvalid(connection, schema, own);
    await connection.exec(
      `${create} concurrently if not exists ${own} on ${schema}.${partition} ${definition}`,
    );
    await connection.exec(`alter index ${schema}.${name} attach partition ${schema}.${own}`);
  }
  return true;
}

/** Drops the index of that name when a failed concurrent build left it invalid. */
async function dropInvalid(connection: Queryable, schema: string, name: string) {
  const [invalid] = await connection.query<{ found: boolean }>(
    `select true as found from pg_index x join pg_class c on c.oid = x.indexrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = $2 and not x.indisvalid`,
    [schema, name],
  );
  if (invalid) await connection.exec(`drop index concurrently if exists ${schema}.${name}`);
}
