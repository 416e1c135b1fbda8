/**
 * The auth schema's migrations, one file each, named by version
 * (`NNN_what.ts`); docs/development.md says how to add one.
 */
import type { Migration } from "../../lib/db/migrate.ts";
import { migration as m001 } from "./001_sites_domains_keys.ts";
import { migration as m002 } from "./002_report_keys.ts";
import { migration as m003 } from "./003_share_links.ts";
import { migration as m004 } from "./004_preview_keys.ts";

export const AUTH_SCHEMA = "auth";

export const authMigrations: readonly Migration[] = [m001, m002, m003, m004];
