/**
 * The ingest schema's migrations, one file each, named by version
 * (`NNN_what.ts`); docs/development.md says how to add one.
 */
import type { Migration } from "../../lib/db/migrate.ts";
import { migration as m001 } from "./001_sites_and_event_types.ts";
import { migration as m002 } from "./002_page_views_events_sessions_visitors_leads.ts";
import { migration as m003 } from "./003_site_zones_and_url_parts.ts";
import { migration as m004 } from "./004_derived_report_tables.ts";
import { migration as m005 } from "./005_leads_keyed_by_site.ts";
import { migration as m006 } from "./006_visit_slice_attributes.ts";
import { migration as m007 } from "./007_page_column.ts";
import { migration as m008 } from "./008_counters_per_utc_day.ts";
import { migration as m009 } from "./009_visit_sums_per_local_period.ts";
import { migration as m010 } from "./010_visitors_per_utc_day.ts";
import { migration as m011 } from "./011_visitor_days_per_channel.ts";
import { migration as m012 } from "./012_visit_attribute_sums.ts";
import { migration as m013 } from "./013_revenue_per_period_and_attribute.ts";
import { migration as m014 } from "./014_page_counts_per_utc_day.ts";
import { migration as m015 } from "./015_sessionless_visits_in_slices.ts";
import { migration as m016 } from "./016_screen_classes.ts";
import { migration as m017 } from "./017_visits_and_rollups.ts";
import { migration as m018 } from "./018_webhook_outbox.ts";
import { migration as m019 } from "./019_upkeep_runs.ts";
import { migration as m020 } from "./020_received_at_brin.ts";
import { migration as m021 } from "./021_rollup_fingerprints.ts";
import { migration as m022 } from "./022_shields_and_segments.ts";
import { migration as m023 } from "./023_mail_outbox.ts";

export const INGEST_SCHEMA = "ingest";

export const ingestMigrations: readonly Migration[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m009,
  m010,
  m011,
  m012,
  m013,
  m014,
  m015,
  m016,
  m017,
  m018,
  m019,
  m020,
  m021,
  m022,
  m023,
];
