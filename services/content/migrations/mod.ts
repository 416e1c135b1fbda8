/**
 * The content schema's migrations, one file each, named by version
 * (`NNN_what.ts`); docs/development.md says how to add one.
 */
import type { Migration } from "../../lib/db/migrate.ts";
import { migration as m001 } from "./001_sites_pages_sections_blocks_posts.ts";
import { migration as m002 } from "./002_webhook_outbox.ts";
import { migration as m003 } from "./003_updated_at_of_pages_sections.ts";
import { migration as m004 } from "./004_changes_feed.ts";
import { migration as m005 } from "./005_language_fallbacks.ts";

export const CONTENT_SCHEMA = "content";

export const contentMigrations: readonly Migration[] = [m001, m002, m003, m004, m005];
