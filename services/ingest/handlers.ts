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

/**
 * Every item ingest answered, by site, kind and outcome (stored, duplicate,
 * refused with its reason, dropped), so "which site sends the most refused
 * events" is one query.
 */
const itemsAnswered = meter.createCounter("crm.ingest.items", {
  description: "Items ingest-service answered, by site, kind, outcome and refusal reason",
  unit: "{item}",
});

function countOutcomes(raw: (RawItem | undefined)[], results: (ItemResult | undefined)[]) {
  results.forEach((result, index) => {
    if (!result) return;
    const item = raw[index];
    itemsAnswered.add(1, {
      [SITE_ID]: item?.siteId ?? "",
      "crm.ingest.kind": item?.body.case ?? "unknown",
      "crm.ingest.outcome": Outcome[result.outcome]?.toLowerCase() ?? "unspecified",
      ...(result.error?.reason ? { "crm.ingest.reason": result.error.reason } : {}),
    });
  });
}

export interface IngestDeps {
  types: EventTypeCache;
  enrichment: Enrichment;
  partitions: Partitions;
  committer: GroupCommit<WriteItem, WriteResult>;
  clock: Clock;
  /** Called after a commit that stored a new lead: its lead.created message is due. */
  leadsStored?(): void;
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
    await Promise.all(
      [...eventSites].map(async (site) => types.set(site, await deps.types.get(site))),
    );
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
      if ("write" in prepared) {
        writes.push(prepared.write);
        positions.push(index);
        if (prepared.write.kind !== "lead") months.push(item.receivedAtMs);
      }
    });
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
    countOutcomes(raw, results);
    return { results: results as ItemResult[] };
  }
}
