/**
 * `deno task start` for `deno task bench ingest`'s `upkeep-off` row: the same
 * system, with ingest-service told in-process to keep none of the reports'
 * derived tables (services/ingest/main.ts, IngestOptions), so the row shows
 * what keeping them costs. No setting of a deployment can do this.
 */
import { startCommand } from "../../services/cli/start.ts";

await startCommand({ ingest: { keepDerived: false } });
