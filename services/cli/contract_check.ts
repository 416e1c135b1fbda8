/**
 * The expand/contract rule, checked on every migration no tagged release
 * ships yet. Migrations run while the previous release still serves (the
 * rollout after the pre-upgrade hook) and after a `helm rollback` to it, so a
 * new migration may only add. A statement that removes or reshapes what older
 * code uses (drops a table or a column, renames, changes a column's type,
 * makes a column NOT NULL, ...) is a contract step: its migration carries the
 * marker `contract: { unusedSince: "vX.Y.Z" }`, naming the tagged release
 * from which on no code uses the old shape (the release that expanded:
 * wrote the new shape and stopped reading the old). Being tagged already,
 * that release is older than the one the step ships in, so the step ships a
 * release later, when no release an upgrade or a rollback meets uses it.
 *
 * Indexes on existing tables are built concurrently (a migration outside a
 * transaction): a plain CREATE INDEX holds off every write to its table while
 * it reads it whole.
 */
import type { Migration } from "../lib/db/migrate.ts";
import { splitStatements } from "../lib/db/sql_statements.ts";
import type { Release } from "./releases.ts";

/** Statements that remove or reshape, by their code (lower case, one space between words). */
const CONTRACTING: [RegExp, string][] = [
  [
    /^drop (table|view|materialized view|type|domain|function|procedure|schema|sequence)\b/,
    "drops a $1",
  ],
  [/^alter (?!index\b|table\b)\w+( \w+)? \S+ rename\b/, "renames"],
  [/^alter type (?!.*\badd value\b)/, "alters a type"],
];

/** What one action of an ALTER TABLE does that removes or reshapes. */
const CONTRACTING_ACTIONS: [RegExp, string][] = [
  [/^drop (column )?(if exists )?(?!constraint\b)\S+/, "drops a column"],
  [/^rename\b/, "renames"],
  [/^alter (column )?\S+ (set data )?type\b/, "changes a column's type"],
  [/^alter (column )?\S+ set not null\b/, "makes a column NOT NULL"],
  [/^set schema\b/, "moves a table to another schema"],
];

const ALTER_TABLE = /^alter table (if exists )?(only )?\S+ /;

/** What a contract step does, or undefined for a statement that only adds. */
export function contracting(code: string): string | undefined {
  const text = code.toLowerCase().replace(/\s+/g, " ").trim();
  const body = text.match(/^do (?:language \w+ )?(\$\w*\$)(.*)\1/);
  if (body) {
    // What a DO block runs is what it does (its EXECUTEd strings are beyond this check).
    for (const { code: inner } of splitStatements(body[2])) {
      const what = contracting(inner.replace(/^(declare .*?)?begin /, ""));
      if (what) return what;
    }
    return undefined;
  }
  const alter = text.match(ALTER_TABLE);
  if (alter) {
    for (const action of topLevelParts(text.slice(alter[0].length))) {
      for (const [pattern, what] of CONTRACTING_ACTIONS) {
        if (pattern.test(action)) return what;
      }
    }
    return undefined;
  }
  for (const [pattern, what] of CONTRACTING) {
    const match = text.match(pattern);
    if (match) return what.replace("$1", match[1] ?? "");
  }
  return undefined;
}

/** The comma-separated parts of text outside parentheses, trimmed. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let part = "";
  for (const c of text) {
    if (c === "(") depth++;
    if (c === ")") depth--;
    if (c === "," && depth === 0) {
      parts.push(part.trim());
      part = "";
    } else part += c;
  }
  parts.push(part.trim());
  return parts;
}

const PLAIN_INDEX =
  /^create (unique )?index (?!concurrently\b)(if not exists )?(\w+ )?on (only )?([\w.]+)/;
const CREATED_TABLE = /^create (unlogged )?table (if not exists )?([\w.]+)/;

/** Problems of one migration not yet released; empty when it keeps the rule. */
export function checkMigration(
  schema: string,
  migration: Migration,
  releases: readonly Release[],
): string[] {
  const problems: string[] = [];
  const at = `${schema} migration ${migration.version} (${migration.name})`;
  const marker = migration.contract?.unusedSince;
  if (marker !== undefined && !releases.some((r) => r.tag === marker)) {
    problems.push(
      `${at}: its contract marker names ${marker}, which is no tagged release ` +
        `(services/cli/releases.ts: ${releases.map((r) => r.tag).join(", ") || "none"})`,
    );
  }
  const created = new Set<string>();
  for (const { code } of splitStatements(migration.sql)) {
    const text = code.toLowerCase();
    if (migration.transactional === false && !runsTwice(text)) {
      problems.push(
        `${at} runs outside a transaction, so a failure leaves its earlier statements applied ` +
          `and the next run repeats them: "${code.slice(0, 120)}" must be safe to run twice ` +
          `(if not exists / if exists)`,
      );
    }
    const table = text.match(CREATED_TABLE)?.[3];
    if (table) created.add(qualified(table, schema));
    const what = contracting(code);
    if (what && marker === undefined) {
      problems.push(
        `${at} ${what} ("${code.slice(0, 120)}"): older code may still use it while it runs. ` +
          `Ship it a release after the one that stopped using it, with ` +
          `contract: { unusedSince: "vX.Y.Z" } naming that release`,
      );
    }
    const index = text.match(PLAIN_INDEX);
    if (index && !created.has(qualified(index[5], schema))) {
      problems.push(
        `${at} builds an index on ${index[5]} without CONCURRENTLY ("${code.slice(0, 120)}"): ` +
          `it would hold off the table's writes while it reads it whole. ` +
          `Build it concurrently in a migration of its own with transactional: false`,
      );
    }
  }
  return problems;
}

/**
 * Whether a statement of a migration outside a transaction may run again
 * after it succeeded: what it makes or drops says IF [NOT] EXISTS. Other
 * statements (an UPDATE, a VACUUM) are the author's to make repeatable.
 */
function runsTwice(text: string): boolean {
  const statement = text.replace(/\s+/g, " ").trim();
  if (/^create (unique )?index /.test(statement)) {
    return /^create (unique )?index (concurrently )?if not exists /.test(statement);
  }
  if (/^create (unlogged )?(table|schema|sequence) /.test(statement)) {
    return / (table|schema|sequence) if not exists /.test(statement);
  }
  if (/^drop /.test(statement)) return /^drop \w+( concurrently)? if exists /.test(statement);
  if (/^alter table .* add (column )?/.test(statement)) {
    return /^alter table .* add (column )?if not exists /.test(statement);
  }
  return true;
}

function qualified(table: string, schema: string): string {
  return table.includes(".") ? table : `${schema}.${table}`;
}
