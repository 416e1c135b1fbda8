/**
 * The transactional outbox of webhook messages, one per service schema that
 * causes messages (content: content.published and post.published; ingest:
 * lead.created). A message is written by the same transaction as the change
 * that causes it, with one delivery row per webhook of the site whose events
 * name its type, so a rolled-back change sends nothing and a committed one is
 * never lost. The site's webhooks (URL, events, secret) are stored beside it,
 * in the same schema, by that service's part of the manifest import: the
 * service reads no other's schema to enqueue or deliver.
 *
 * Tables, in schema S:
 * - S.webhooks: a site's webhooks as the manifest lists them.
 * - S.webhook_messages: id (the `webhook-id`), type, when it happened (the
 *   body's `timestamp`), its data as JSON text, and a subject (a scheduled
 *   post's slug) by which an import finds a message it must move or drop.
 * - S.webhook_deliveries: one per message and webhook URL: pending,
 *   delivered or failed; attempts made; when the next is due; the lease of
 *   the worker making one (worker.ts).
 * - S.webhook_attempts: every attempt, for `webhooks log`.
 */
import type { Param, Queryable } from "../db/mod.ts";
import type { WebhookType } from "../formats.ts";
import type { WebhookDef } from "../manifest/types.ts";

/** A new message id: `msg_` and 128 random bits. */
export function newMessageId(): string {
  return `msg_${crypto.randomUUID().replaceAll("-", "")}`;
}

export interface NewMessage {
  id: string;
  siteId: string;
  type: WebhookType;
  /** Unix ms: when it happened, the body's `timestamp`. */
  occurredAt: number;
  /** What an import finds the message by (a scheduled post's slug). */
  subject?: string | null;
  /** The body's `data`, as JSON text (its members keep this order). */
  data: string;
  /** Unix ms of the first attempt; the occurrence unless later. */
  dueAt?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const time = (value: unknown) => new Date(value as string | Date).getTime();

/**
 * Writes the messages and a pending delivery to every webhook of their site
 * that names their type, in the caller's transaction; a message no webhook
 * wants is not stored. A message id already stored gains the deliveries it
 * lacks (a webhook added since) and is otherwise left alone. One statement.
 */
export async function enqueueMessages(
  tx: Queryable,
  schema: string,
  { messages, createdAt }: { messages: readonly NewMessage[]; createdAt: number },
): Promise<number> {
  if (messages.length === 0) return 0;
  const rows = messages.map((m) => ({
    id: m.id,
    site_id: m.siteId,
    type: m.type,
    occurred_at: iso(m.occurredAt),
    subject: m.subject ?? null,
    data: m.data,
    due_at: iso(m.dueAt ?? m.occurredAt),
  }));
  const [answer] = await tx.query<{ deliveries: number }>(
    `with m as (
       select * from json_to_recordset($1::json) as r(id text, site_id text, type text,
         occurred_at timestamptz, subject text, data text, due_at timestamptz)
     ), targets as (
       select m.id, w.url, m.site_id, m.due_at
         from m join ${schema}.webhooks w
           on w.site_id = m.site_id and w.events @> to_jsonb(m.type)
     ), messages as (
       insert into ${schema}.webhook_messages
         (id, site_id, type, occurred_at, subject, data, created_at)
       select m.id, m.site_id, m.type, m.occurred_at, m.subject, m.data::json, $2::timestamptz
         from m where exists (select 1 from targets t where t.id = m.id)
       on conflict (site_id, id) do nothing
     ), deliveries as (
       insert into ${schema}.webhook_deliveries (message_id, url, site_id, next_at)
       select id, url, site_id, due_at from targets
       on conflict (site_id, message_id, url) do nothing
       returning 1
     )
     select count(*)::int as deliveries from deliveries`,
    [JSON.stringify(rows), iso(createdAt)],
  );
  return answer?.deliveries ?? 0;
}

export interface ScheduledMessage {
  id: string;
  subject: string | null;
  occurredAt: number;
}

/**
 * The site's messages of a type that nobody has tried yet and whose time has
 * not come: what an import may still move or drop.
 */
export async function scheduledMessages(
  tx: Queryable,
  schema: string,
  query: { siteId: string; type: WebhookType; now: number },
): Promise<ScheduledMessage[]> {
  const rows = await tx.query<{ id: string; subject: string | null; occurred_at: Date | string }>(
    `select m.id, m.subject, m.occurred_at from ${schema}.webhook_messages m
      where m.site_id = $1 and m.type = $2
        and exists (select 1 from ${schema}.webhook_deliveries d
                     where d.site_id = m.site_id and d.message_id = m.id)
        and not exists (select 1 from ${schema}.webhook_deliveries d
                         where d.site_id = m.site_id and d.message_id = m.id
                           and (d.attempts > 0 or d.state <> 'pending' or d.next_at <= $3))
      for update of m`,
    [query.siteId, query.type, iso(query.now)],
  );
  return rows.map((r) => ({ id: r.id, subject: r.subject, occurredAt: time(r.occurred_at) }));
}

/** Deletes the site's messages (and their deliveries) that were never tried. */
export async function dropMessages(
  tx: Queryable,
  schema: string,
  { siteId, ids }: { siteId: string; ids: readonly string[] },
): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `delete from ${schema}.webhook_messages
      where site_id = $1 and id in (select value from json_array_elements_text($2::json))`,
    [siteId, JSON.stringify(ids)],
  );
}

/**
 * Makes the site's stored webhooks those of the manifest, and drops what
 * they no longer want: every pending delivery to a URL no longer listed, and
 * the not yet due, never tried deliveries of a type a webhook stopped
 * naming. Answers counts of webhooksAdded, webhooksChanged, webhooksRemoved.
 */
export async function syncWebhooks(
  tx: Queryable,
  schema: string,
  { siteId, webhooks, now }: { siteId: string; webhooks: readonly WebhookDef[]; now: number },
): Promise<Record<string, number>> {
  const changes: Record<string, number> = {};
  const count = (what: string) => (changes[what] = (changes[what] ?? 0) + 1);
  const rows = await tx.query<{ url: string; events: string; secret: string; position: number }>(
    `select url, events::text as events, secret, position from ${schema}.webhooks
      where site_id = $1 order by url for update`,
    [siteId],
  );
  const fingerprint = (events: readonly string[], secret: string, position: number) =>
    JSON.stringify([events, secret, position]);
  const existing = new Map(
    rows.map((r) => [r.url, fingerprint(JSON.parse(r.events), r.secret, r.position)]),
  );
  const wanted = new Map(webhooks.map((w, position) => [w.url, { ...w, position }]));
  for (const url of existing.keys()) {
    if (wanted.has(url)) continue;
    await tx.query(`delete from ${schema}.webhooks where site_id = $1 and url = $2`, [siteId, url]);
    await tx.query(
      `delete from ${schema}.webhook_deliveries
        where site_id = $1 and url = $2 and state = 'pending'`,
      [siteId, url],
    );
    count("webhooksRemoved");
  }
  for (const [url, w] of wanted) {
    const before = existing.get(url);
    if (before === fingerprint(w.events, w.secret, w.position)) continue;
    await tx.query(
      `insert into ${schema}.webhooks (site_id, url, events, secret, position)
       values ($1, $2, $3::jsonb, $4, $5)
       on conflict (site_id, url) do update
         set events = excluded.events, secret = excluded.secret, position = excluded.position`,
      [siteId, url, JSON.stringify(w.events), w.secret, w.position],
    );
    count(before === undefined ? "webhooksAdded" : "webhooksChanged");
  }
  if (Object.keys(changes).length > 0) {
    await tx.query(
      `delete from ${schema}.webhook_deliveries d
        using ${schema}.webhook_messages m
        where d.site_id = m.site_id and d.message_id = m.id and d.site_id = $1
          and d.state = 'pending'
          and d.attempts = 0 and d.next_at > $2
          and not exists (select 1 from ${schema}.webhooks w
                           where w.site_id = d.site_id and w.url = d.url
                             and w.events @> to_jsonb(m.type))`,
      [siteId, iso(now)],
    );
  }
  return changes;
}

/** The site's webhooks as export-site lists them: URL and events, never the secret. */
export async function exportWebhooks(
  q: Queryable,
  schema: string,
  siteId: string,
): Promise<{ url: string; events: WebhookType[] }[]> {
  const rows = await q.query<{ url: string; events: string }>(
    `select url, events::text as events from ${schema}.webhooks
      where site_id = $1 order by position`,
    [siteId],
  );
  return rows.map((r) => ({ url: r.url, events: JSON.parse(r.events) }));
}

/** One attempt as `webhooks log` prints it. */
export interface AttemptRow {
  id: string;
  type: string;
  url: string;
  attempt: number;
  status: number | null;
  error: string | null;
  /** Unix ms. */
  at: number;
}

const CURSOR = /^(\d+):(\d+)$/;

/**
 * A page of the site's attempts, oldest first (keyset paging on the time and
 * the row's sequence number), from `sinceMs` when given. The cursor is where
 * the previous page ended; an empty next cursor means the last page.
 */
export async function attemptPage(
  q: Queryable,
  schema: string,
  request: { siteId: string; sinceMs?: number; cursor: string; pageSize: number },
): Promise<{ rows: AttemptRow[]; nextCursor: string }> {
  const after = request.cursor === "" ? undefined : CURSOR.exec(request.cursor);
  if (after === null) throw new Error("malformed attempts cursor");
  const params: Param[] = [request.siteId, request.pageSize + 1];
  let where = "site_id = $1";
  if (request.sinceMs !== undefined) {
    params.push(iso(request.sinceMs));
    where += ` and at >= $${params.length}::timestamptz`;
  }
  if (after) {
    params.push(iso(Number(after[1])), after[2]);
    where += ` and (at, seq) > ($${params.length - 1}::timestamptz, $${params.length}::bigint)`;
  }
  const rows = await q.query<{
    seq: string;
    message_id: string;
    type: string;
    url: string;
    attempt: number;
    status: number | null;
    error: string | null;
    at: Date | string;
  }>(
    `select seq::text as seq, message_id, type, url, attempt, status, error, at
       from ${schema}.webhook_attempts where ${where} order by at, seq limit $2`,
    params,
  );
  const page = rows.slice(0, request.pageSize);
  const last = page[page.length - 1];
  return {
    rows: page.map((r) => ({
      id: r.message_id,
      type: r.type,
      url: r.url,
      attempt: r.attempt,
      status: r.status,
      error: r.error,
      at: time(r.at),
    })),
    nextCursor: rows.length > request.pageSize && last ? `${time(last.at)}:${last.seq}` : "",
  };
}
