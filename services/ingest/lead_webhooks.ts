/**
 * lead.created: one message per lead stored (a repeated lead_id stores
 * nothing and tells nothing), written into ingest-service's outbox by the
 * writer's own transaction, due at once. Its data is the site id and the
 * lead exactly as `leads export` prints it.
 */
import { create } from "@bufbuild/protobuf";
import type { Queryable } from "../lib/db/mod.ts";
import { leadJson } from "../lib/export_rows.ts";
import { LeadRowSchema } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { enqueueMessages, newMessageId } from "../lib/webhooks/outbox.ts";
import { toLead } from "./exports.ts";
import { INGEST_SCHEMA } from "./migrations/mod.ts";
import type { LEADS, RowOf } from "./tables.ts";

/** Enqueues lead.created for the leads this transaction inserted (rows as the writer stored them). */
export async function enqueueLeadsCreated(
  tx: Queryable,
  leads: readonly RowOf<typeof LEADS.columns>[],
): Promise<void> {
  if (leads.length === 0) return;
  const messages = leads.map((lead) => ({
    id: newMessageId(),
    siteId: lead.site_id,
    type: "lead.created" as const,
    occurredAt: Date.parse(lead.received_at),
    data: JSON.stringify({
      siteId: lead.site_id,
      ...leadJson(create(LeadRowSchema, toLead(lead))),
    }),
  }));
  const createdAt = Math.max(...messages.map((m) => m.occurredAt));
  await enqueueMessages(tx, INGEST_SCHEMA, { messages, createdAt });
}
