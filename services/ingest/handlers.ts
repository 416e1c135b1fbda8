/**
 * IngestService: one call carries a batch of marketing requests from the
 * gateway. Each item is prepared on its own (refusals answered at once),
 * the rest are handed to the group commit, and the call answers only after
 * the transaction holding them has committed.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type IngestItem,
  type IngestService,
  type ItemResult,
  Outcome,
  Source,
} from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import type { ErrorFields } from "../lib/errors.ts";
import type { Refusal } from "./body_fields.ts";
import type { GroupCommit } from "./group_commit.ts";
import type { EventTypeCache, TypesOfSite } from "./event_types.ts";
import type { Partitions } from "./partitions.ts";
import { type Enrichment, type Prepared, prepareItem, type RawItem } from "./prepare.ts";
import type { WriteItem, WriteResult } from "./rows.ts";
import type { Clock } from "../lib/clock.ts";
import { withStorageDeadline } from "../lib/db/mod.ts";
import { meter, SITE_ID } from "../lib/telemetry.ts";
import type { ShieldCache } from "./shield_cache.ts";
import { type DropReason, referrerHost, type Shield } from "../lib/shields.ts";
import type { Drop } from "./storage.ts";

/**
 * Every item ingest answered, by kind and outcome (stored, duplicate,
 * refused with its reason, dropped), and by site where the operator asked
 * for it (METRICS_PER_SITE): a label per site multiplies the series by the
 * number of sites, on every ingest pod and again at every rollout (each pod
 * is an instance of its own), so it is off unless wanted
 * (docs/observability.md).
 */
const itemsAnswered = meter.createCounter("crm.ingest.items", {
  description: "Items ingest-service answered, by kind, outcome and refusal reason (and site)",
  unit: "{item}",
});

/** Counts a call's answers: one add per distinct set of attributes, not one per item. */
export function countOutcomes(
  raw: (RawItem | undefined)[],
  results: (ItemResult | undefined)[],
  perSite: boolean,
  add: (count: number, attributes: Record<string, string>) => void = (n, a) =>
    itemsAnswered.add(n, a),
): void {
  const counts = new Map<string, { count: number; attributes: Record<string, string> }>();
  results.forEach((result, index) => {
    if (!result) return;
    const item = raw[index];
    const attributes: Record<string, string> = {
      ...(perSite ? { [SITE_ID]: item?.siteId ?? "" } : {}),
      "crm.ingest.kind": item?.body.case ?? "unknown",
      "crm.ingest.outcome": Outcome[result.outcome]?.toLowerCase() ?? "unspecified",
      ...(result.error?.reason ? { "crm.ingest.reason": result.error.reason } : {}),
    };
    const key = JSON.stringify(attributes);
    const seen = counts.get(key);
    if (seen) seen.count++;
    else counts.set(key, { count: 1, attributes });
  });
  for (const { count, attributes } of counts.values()) add(count, attributes);
}

export interface IngestDeps {
  types: EventTypeCache;
  enrichment: Enrichment;
  partitions: Partitions;
  committer: GroupCommit<WriteItem, WriteResult>;
  clock: Clock;
  /** METRICS_PER_SITE: crm.ingest.items carries the site id. */
  metricsPerSite?: boolean;
  /** Called after a commit that stored a new lead: its lead.created message is due. */
  leadsStored?(): void;
  /** Each site's shields and the referrer block list; none when absent. */
  shields?: ShieldCache;
  /** Counts the page views and events shields dropped, before their answers go. */
  countDropped?(drops: Drop[]): Promise<void>;
}

/** The path of a stored URL, or undefined when it has none. */
function pathOf(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** Most sessions remembered as dropped for their referrer (their events are dropped too). */
const MAX_SPAM_SESSIONS = 50_000;

/**
 * Why a page view or event about to be stored is dropped by its site's
 * shields, or undefined. An event carries no referrer: it is dropped when its
 * session's page view was dropped for its referrer (as this process saw it).
 */
function shieldReason(
  write: WriteItem,
  item: RawItem,
  shield: Shield,
  context: { enrichment: Enrichment; spamSessions: Map<string, true> },
): DropReason | undefined {
  if (write.kind === "lead") return undefined;
  const row = write.row;
  const sessionKey = row.session_id ? `${item.siteId}\u0000${row.session_id}` : undefined;
  const reason = shield.reason({
    clientIp: item.clientIp,
    country: () =>
      write.kind === "view" ? write.row.country : context.enrichment.geo.country(item.clientIp),
    path: pathOf(row.url),
    referrerHost: write.kind === "view" ? referrerHost(write.row.referrer) : undefined,
  });
  if (reason === "referrer" && sessionKey) {
    const spam = context.spamSessions;
    if (spam.size >= MAX_SPAM_SESSIONS) spam.delete(spam.keys().next().value!);
    spam.set(sessionKey, true);
  }
  if (reason === undefined && write.kind === "event" && sessionKey) {
    if (context.spamSessions.has(sessionKey)) return "referrer";
  }
  return reason;
}

function rawItem(item: IngestItem, clock: Clock): RawItem | undefined {
  const { body } = item;
  if (body.case === undefined || !item.siteId) return undefined;
  return {
    source: item.source === Source.BROWSER ? "browser" : "server",
    siteId: item.siteId,
    receivedAtMs: Number(item.receivedAtMs) || clock.now(),
    clientIp: item.clientIp,
    userAgent: item.userAgent,
    body,
  };
}

/** The typed fields of a refusal, as its error detail carries them. */
function refusalFields(refusal: Refusal): ErrorFields | undefined {
  switch (refusal.reason) {
    case "invalid_body":
      return refusal.fields && { case: "fieldProblem", value: refusal.fields };
    case "unknown_event":
      return { case: "unknownEvent", value: refusal.fields };
    default:
      return undefined;
  }
}

function answer(prepared: Prepared): ItemResult | undefined {
  if ("dropped" in prepared) return { outcome: Outcome.DROPPED } as ItemResult;
  if ("refused" in prepared) {
    return {
      outcome: Outcome.REFUSED,
      code: prepared.code,
      error: { reason: prepared.refused.reason, fields: refusalFields(prepared.refused) },
    } as ItemResult;
  }
  return undefined;
}

/**
 * How long one Ingest call may spend on storage: under the gateway's 10 s
 * deadline with room for a batch waiting for a free call first.
 */
const INGEST_DEADLINE_MS = 4_000;

export function ingestHandlers(deps: IngestDeps): ServiceImpl<typeof IngestService> {
  const spamSessions = new Map<string, true>();
  return {
    ingest({ items }) {
      // Every storage step of a call (event types, partitions, the commit)
      // together within the deadline: a database that stopped answering
      // gives the gateway UNAVAILABLE (503) well before its own 10 s
      // deadline (a 504), however the time was spent.
      return withStorageDeadline(ingestItems(items), INGEST_DEADLINE_MS);
    },
  };

  async function ingestItems(items: IngestItem[]) {
    const raw = items.map((item) => rawItem(item, deps.clock));
    const eventSites = new Set(
      raw.filter((r) => r?.body.case === "event").map((r) => r!.siteId),
    );
    const types = new Map<string, TypesOfSite>();
    const shields = new Map<string, Shield>();
    const shieldSites = deps.shields
      ? new Set(raw.filter((r) => r && r.body.case !== "lead").map((r) => r!.siteId))
      : new Set<string>();
    await Promise.all([
      ...[...eventSites].map(async (site) => types.set(site, await deps.types.get(site))),
      ...[...shieldSites].map(async (site) => shields.set(site, await deps.shields!.get(site))),
    ]);
    const drops: Drop[] = [];
    const results: (ItemResult | undefined)[] = [];
    const writes: WriteItem[] = [];
    const positions: number[] = [];
    const months: number[] = [];
    raw.forEach((item, index) => {
      if (!item) {
        results[index] = {
          outcome: Outcome.REFUSED,
          code: 3,
          error: { reason: "invalid_item" },
        } as ItemResult;
        return;
      }
      const prepared = prepareItem(item, types.get(item.siteId), deps.enrichment);
      results[index] = answer(prepared);
      const shield = shields.get(item.siteId);
      if ("write" in prepared && shield) {
        const reason = shieldReason(prepared.write, item, shield, {
          enrichment: deps.enrichment,
          spamSessions,
        });
        if (reason) {
          // Answered as a stored item would be; counted, never stored.
          drops.push({ siteId: item.siteId, reason, atMs: item.receivedAtMs });
          results[index] = { outcome: Outcome.DROPPED } as ItemResult;
          return;
        }
      }
      if ("write" in prepared) {
        writes.push(prepared.write);
        positions.push(index);
        if (prepared.write.kind !== "lead") months.push(item.receivedAtMs);
      }
    });
    // Counted beside the commit; a failure fails the call as the commit's would.
    const counted = drops.length > 0
      ? deps.countDropped?.(drops).then(() => undefined, (error: unknown) => ({ error }))
      : undefined;
    if (writes.length > 0) {
      await deps.partitions.ensure(months);
      const written = await deps.committer.submit(writes);
      if (written.some((w, i) => writes[i].kind === "lead" && !w.duplicate)) deps.leadsStored?.();
      written.forEach((w, i) => {
        results[positions[i]] = {
          outcome: w.duplicate ? Outcome.DUPLICATE : Outcome.STORED,
          id: w.id ?? "",
        } as ItemResult;
      });
    }
    const failed = await counted;
    if (failed) throw failed.error;
    countOutcomes(raw, results, deps.metricsPerSite ?? false);
    return { results: results as ItemResult[] };
  }
}
