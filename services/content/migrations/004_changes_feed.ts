import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 4,
  name: "the changes feed",
  // What each import changed in the content API's answers (the names its
  // content.published message carries), and each scheduled post (its
  // post.published message), written by the import's transaction: the feed
  // GET /content/v1/changes answers from. `at` is when the change is in the
  // feed: the import's time, or the post's publishedAt. An import serialises
  // on its site's row, so one site's seq values follow its commits.
  sql: `
      create table content.changes (
        seq bigint generated always as identity primary key,
        site_id text not null,
        kind text not null check (kind in ('content', 'post')),
        at timestamptz not null,
        slug text,
        names json not null
      );
      create index changes_by_site on content.changes (site_id, seq);
    `,
};
