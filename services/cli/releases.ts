/**
 * The tagged releases (`git tag`, CHANGELOG.md), oldest first, with the last
 * migration of each schema each one ships. A migration at or below its
 * schema's version in the last release is applied in installations and never
 * changes (released_migrations.json holds its fingerprint; schemas_test.ts
 * checks both). Whoever tags a release adds it here in the same commit.
 */
export interface Release {
  tag: string;
  /** The last migration version of each schema in the release. */
  schemas: Record<string, number>;
}

export const RELEASES: readonly Release[] = [
  { tag: "v0.3.0", schemas: { auth: 2, content: 2, ingest: 18 } },
];
