import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import type { Migration } from "../lib/db/migrate.ts";
import { SCHEMAS } from "./schemas.ts";
import { RELEASES } from "./releases.ts";
import released from "./released_migrations.json" with { type: "json" };

/**
 * What a migration does, as a fingerprint: its statements with every run of
 * white space made one space (line breaks and indentation change nothing).
 */
function fingerprint(migration: Migration): string {
  return createHash("sha256").update(migration.sql.replace(/\s+/g, " ").trim()).digest("hex");
}

const lastRelease = RELEASES[RELEASES.length - 1];
const fingerprints: Record<string, Record<string, string>> = released;

describe("the migrations", () => {
  it.each(SCHEMAS)(
    "of $schema are one file each, named by version",
    async ({ service, migrations }) => {
      const folder = new URL(`../${service}/migrations/`, import.meta.url);
      const files = [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) => n !== "mod.ts");
      expect(files.length).toBe(migrations.length);
      for (const name of files) {
        expect(name, name).toMatch(/^\d{3}_[a-z0-9_]+\.ts$/);
        const { migration } = await import(new URL(name, folder).href);
        expect(migrations[Number(name.slice(0, 3)) - 1], name).toBe(migration);
      }
    },
  );

  it.each(SCHEMAS)(
    "of $schema that a tagged release ships never change",
    ({ schema, migrations }) => {
      const shipped = lastRelease.schemas[schema];
      expect(shipped, `${lastRelease.tag} names no version of ${schema}`).toBeGreaterThan(0);
      expect(migrations.length).toBeGreaterThanOrEqual(shipped);
      const recorded = fingerprints[schema] ?? {};
      for (const migration of migrations.slice(0, shipped)) {
        const actual = fingerprint(migration);
        expect(
          recorded[migration.version],
          `${schema} ${migration.version} (${migration.name}) ships in ${lastRelease.tag}: ` +
            `it may not change, and released_migrations.json records it as "${actual}"`,
        ).toBe(actual);
      }
      expect(Object.keys(recorded).map(Number).sort((a, b) => a - b))
        .toEqual(migrations.slice(0, shipped).map((m) => m.version));
    },
  );
});

describe("the fingerprint of a migration", () => {
  const base = {
    version: 1,
    name: "t",
    sql: "create table s.t (a int);\n  create index i on s.t (a);",
  };

  it("ignores line breaks and indentation", () => {
    const reflowed = {
      ...base,
      sql: "\n    create table s.t (a int); create index i\n on s.t (a);  ",
    };
    expect(fingerprint(reflowed)).toBe(fingerprint(base));
  });

  it("changes with what the statements do", () => {
    const changed = { ...base, sql: base.sql.replace("(a)", "(a desc)") };
    expect(fingerprint(changed)).not.toBe(fingerprint(base));
  });
});
