/**
 * The analytics commands of `deno task admin`: exports as NDJSON (one JSON
 * object a line, oldest first, streamed from ingest-service page by page),
 * visitor deletion, the retention job and the reports.
 */
import { parseArgs } from "node:util";
import type { Config } from "../lib/config.ts";
import type { AdminClients } from "./admin_clients.ts";
import { eventJson, leadJson, pageViewJson } from "../lib/export_rows.ts";
import { answerJson, queryBodyOf } from "../lib/stats/wire.ts";
import { Code, publicError } from "../lib/errors.ts";
import { type CommandIo, pathOf } from "./command_io.ts";

export class UsageError extends Error {}

/** A page of an export is read within this. */
const EXPORT_PAGE_TIMEOUT_MS = 5 * 60_000;
/** The longest `retention run` waits for ingest-service (the chart's CronJob allows more). */
export const RETENTION_TIMEOUT_MS = 6 * 60 * 60_000;

export function sinceOf(value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new UsageError(`--since must be an ISO 8601 date or time, got "${value}"`);
  }
  return BigInt(ms);
}

type ExportRequest = { siteId: string; sinceMs?: bigint; cursor: string };
/** One page of an export, each row as the JSON text of its line. */
type Exporter = (
  clients: AdminClients,
  request: ExportRequest,
) => Promise<{ lines: string[]; nextCursor: string }>;

const options = { timeoutMs: EXPORT_PAGE_TIMEOUT_MS };
const EXPORTERS: Record<string, Exporter> = {
  events: async (c, r) => {
    const page = await c.ingest.exportEvents(r, options);
    return {
      lines: page.rows.map((row) => JSON.stringify(eventJson(row))),
      nextCursor: page.nextCursor,
    };
  },
  pageviews: async (c, r) => {
    const page = await c.ingest.exportPageViews(r, options);
    return {
      lines: page.rows.map((row) => JSON.stringify(pageViewJson(row))),
      nextCursor: page.nextCursor,
    };
  },
  leads: async (c, r) => {
    const page = await c.ingest.exportLeads(r, options);
    return {
      lines: page.rows.map((row) => JSON.stringify(leadJson(row))),
      nextCursor: page.nextCursor,
    };
  },
};

/** Every page of an export as NDJSON lines, in order: only one page is ever held in memory. */
export async function* exportPages(
  clients: AdminClients,
  { what, siteId, sinceMs }: { what: keyof typeof EXPORTERS; siteId: string; sinceMs?: bigint },
): AsyncGenerator<string[]> {
  let cursor = "";
  do {
    const page = await EXPORTERS[what](clients, { siteId, sinceMs, cursor });
    if (page.lines.length > 0) yield page.lines;
    cursor = page.nextCursor;
  } while (cursor !== "");
}

/** `events|pageviews|leads export SITE_ID [--since ISO]`: prints NDJSON, returns nothing to print. */
export async function exportCommand(
  clients: AdminClients,
  { what, args, io }: { what: keyof typeof EXPORTERS; args: string[]; io: CommandIo },
): Promise<undefined> {
  const [action, ...rest] = args;
  if (action !== "export") throw new UsageError(`${what} needs export`);
  const { values, positionals } = parseArgs({
    args: rest,
    options: { since: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError("expected SITE_ID [--since ISO]");
  const pages = exportPages(clients, {
    what,
    siteId: positionals[0],
    sinceMs: sinceOf(values.since),
  });
  for await (const rows of pages) {
    await io.stdout.write(rows.join("\n") + "\n");
  }
  return undefined;
}

/** `visitor delete SITE_ID VISITOR_ID [--leads]` */
export async function visitorCommand(clients: AdminClients, args: string[]): Promise<unknown> {
  const [action, ...rest] = args;
  if (action !== "delete") throw new UsageError("visitor needs delete");
  const { values, positionals } = parseArgs({
    args: rest,
    options: { leads: { type: "boolean", default: false } },
    allowPositionals: true,
  });
  if (positionals.length !== 2) throw new UsageError("expected SITE_ID VISITOR_ID [--leads]");
  const [siteId, visitorId] = positionals;
  const answer = await clients.ingest.deleteVisitor({ siteId, visitorId, leads: values.leads });
  const deleted = Object.fromEntries(
    Object.entries(answer.deleted).map(([k, v]) => [k, Number(v)]),
  );
  return { siteId, visitorId, leads: values.leads, deleted };
}

/** `retention run`: RETENTION_DAYS of this command's environment wins when set. */
export async function retentionCommand(
  clients: AdminClients,
  args: string[],
  config: Config,
): Promise<unknown> {
  if (args.length !== 1 || args[0] !== "run") throw new UsageError("retention needs run");
  const answer = await clients.ingest.runRetention(
    { retentionDays: config.retentionDaysSet ? config.retentionDays : undefined },
    { timeoutMs: RETENTION_TIMEOUT_MS },
  );
  return {
    retentionDays: answer.retentionDays,
    cutoff: new Date(Number(answer.cutoffMs)).toISOString(),
    droppedPartitions: answer.droppedPartitions,
    deletedRows: Object.fromEntries(
      Object.entries(answer.deletedRows).map(([k, v]) => [k, Number(v)]),
    ),
    elapsedMs: Number(answer.elapsedMs),
    leads: "kept",
  };
}

/** A reports query can take this long (the reference engine over years of rows, say). */
const STATS_TIMEOUT_MS = 10 * 60_000;

/**
 * `stats SITE_ID FILE`: the answer of the reports query in FILE, exactly as
 * POST /stats/v1/query answers it (the body must be a JSON object, as there).
 * `stats rebuild SITE_ID`: the site's derived report tables recomputed from
 * its rows, and what changed. `stats dropped SITE_ID [--since ISO]`: how many
 * page views and events the site's shields dropped, by reason.
 */
export async function statsCommand(
  clients: AdminClients,
  args: string[],
  io: CommandIo,
): Promise<unknown> {
  if (args[0] === "rebuild") {
    if (args.length !== 2) throw new UsageError("expected rebuild SITE_ID");
    const answer = await clients.ingest.rebuildStats(
      { siteId: args[1] },
      { timeoutMs: STATS_TIMEOUT_MS },
    );
    return {
      siteId: answer.siteId,
      tables: Object.fromEntries(
        answer.tables.map((t) => [
          t.table,
          { added: Number(t.added), removed: Number(t.removed), changed: Number(t.changed) },
        ]),
      ),
      elapsedMs: Number(answer.elapsedMs),
    };
  }
  if (args[0] === "dropped") {
    const { positionals, values } = parseArgs({
      args: args.slice(1),
      options: { since: { type: "string" } },
      allowPositionals: true,
    });
    if (positionals.length !== 1) throw new UsageError("expected dropped SITE_ID [--since ISO]");
    const answer = await clients.ingest.droppedCounts({
      siteId: positionals[0],
      sinceMs: sinceOf(values.since),
    });
    return {
      ip: Number(answer.ip),
      country: Number(answer.country),
      page: Number(answer.page),
      referrer: Number(answer.referrer),
    };
  }
  if (args.length !== 2) {
    throw new UsageError("expected SITE_ID FILE, rebuild SITE_ID or dropped SITE_ID [--since ISO]");
  }
  const [siteId, file] = args;
  const text = await Deno.readTextFile(pathOf(io, file)).catch((e) => {
    throw new UsageError(`cannot read ${file}: ${e.message}`);
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw publicError(Code.InvalidArgument, "invalid_body");
  }
  const answer = await clients.stats.query(
    { siteId, body: queryBodyOf(body as Record<string, unknown>) },
    { timeoutMs: STATS_TIMEOUT_MS },
  );
  return answerJson(answer);
}

/** Lines a history import sends per call; every call is one transaction when storing. */
const HISTORY_CHUNK = 5_000;
const HISTORY_TIMEOUT_MS = 10 * 60_000;

/** The non-blank lines of a file with their numbers (from 1), read as a stream. */
async function* linesOf(path: string): AsyncGenerator<{ text: string; number: number }> {
  const file = await Deno.open(path);
  let rest = "";
  let number = 0;
  for await (const chunk of file.readable.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    for (const text of parts) {
      number++;
      if (text.trim() !== "") yield { text, number };
    }
  }
  number++;
  if (rest.trim() !== "") yield { text: rest, number };
}

/**
 * `history import SITE_ID FILE`: every line checked first (nothing is stored
 * when one is refused), then stored a chunk a transaction; importing the
 * same file again stores nothing twice, so an import stopped halfway is
 * completed by running it again.
 */
export async function historyCommand(
  clients: AdminClients,
  args: string[],
  io: CommandIo,
): Promise<unknown> {
  if (args[0] !== "import" || args.length !== 3) {
    throw new UsageError("expected import SITE_ID FILE");
  }
  const [, siteId, file] = args;
  const path = pathOf(io, file);
  await Deno.stat(path).catch((e) => {
    throw new UsageError(`cannot read ${file}: ${e.message}`);
  });
  const send = async (dryRun: boolean) => {
    const total = { pageviews: 0, events: 0, leads: 0, skipped: 0 };
    let chunk: { text: string; number: number }[] = [];
    const flush = async () => {
      if (chunk.length === 0 && Object.values(total).some((n) => n > 0)) return;
      const answer = await clients.ingest.importHistory({
        siteId,
        lines: chunk.map((l) => l.text),
        firstLine: BigInt(chunk[0]?.number ?? 1),
        lineNumbers: chunk.map((l) => BigInt(l.number)),
        dryRun,
      }, { timeoutMs: HISTORY_TIMEOUT_MS });
      total.pageviews += Number(answer.pageviews);
      total.events += Number(answer.events);
      total.leads += Number(answer.leads);
      total.skipped += Number(answer.skipped);
      chunk = [];
    };
    for await (const line of linesOf(path)) {
      chunk.push(line);
      if (chunk.length === HISTORY_CHUNK) await flush();
    }
    await flush();
    return total;
  };
  await send(true);
  return await send(false);
}
