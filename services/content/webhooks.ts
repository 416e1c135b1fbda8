/**
 * content-service's webhook messages, written by the import's own
 * transaction into its outbox (lib/webhooks/outbox.ts):
 *
 * - content.published when the import changed what the content API
 *   returns (changes.ts), due at once;
 * - post.published for every post scheduled ahead, due at its publishedAt.
 *   The message exists from the import that scheduled the post, so the post's
 *   time arriving needs no transaction of its own and no replica has to
 *   notice it first: the delivery worker finds it due. An import that moves
 *   or unschedules the post drops the message in the same transaction (a
 *   moved post gets a message for its new time); one that leaves it as it
 *   was keeps the message and its id.
 *
 * The same transaction records both in the changes feed (content.changes,
 * feed.ts) from the same values, whether or not a webhook wants them, so the
 * feed and the messages name the same things by construction: a content
 * change at the import's time, a scheduled post at its publishedAt (dropped
 * and kept with its message).
 */
import type { Queryable } from "../lib/db/mod.ts";
import {
  dropMessages,
  enqueueMessages,
  type NewMessage,
  newMessageId,
  scheduledMessages,
} from "../lib/webhooks/outbox.ts";
import { type ContentChanges, contentChanges } from "./changes.ts";
import { CONTENT_SCHEMA } from "./migrations/mod.ts";
import type { Post, SiteContent } from "./model.ts";

const key = (slug: string | null, at: number) => `${slug}\u0000${at}`;

/**
 * Records what the import from `before` to `after` at `now` changed in the
 * feed and, when `told` (a webhook wants content messages), enqueues its
 * messages; answers the deliveries added.
 */
export async function enqueueImportMessages(
  tx: Queryable,
  change: {
    siteId: string;
    before: SiteContent | undefined;
    after: SiteContent | undefined;
    now: number;
    told: boolean;
  },
): Promise<number> {
  const { siteId, before, after, now, told } = change;
  const messages: NewMessage[] = [];
  const changed = contentChanges(before, after, now);
  const scheduled = after?.blog.scheduling
    ? after.posts.filter((p) =>
      p.status === "published" && p.publishedAt !== null && p.publishedAt > now
    )
    : [];
  await recordChanges(tx, { siteId, changed, scheduled, now });
  if (!told) return 0;
  if (changed) {
    messages.push({
      id: newMessageId(),
      siteId,
      type: "content.published",
      occurredAt: now,
      data: JSON.stringify({ siteId, ...changed }),
    });
  }
  const wanted = new Set(scheduled.map((p) => key(p.slug, p.publishedAt!)));
  const existing = await scheduledMessages(tx, CONTENT_SCHEMA, {
    siteId,
    type: "post.published",
    now,
  });
  await dropMessages(tx, CONTENT_SCHEMA, {
    siteId,
    ids: existing.filter((m) => !wanted.has(key(m.subject, m.occurredAt))).map((m) => m.id),
  });
  const kept = new Map(existing.map((m) => [key(m.subject, m.occurredAt), m.id]));
  for (const post of scheduled) {
    const publishedAt = post.publishedAt!;
    messages.push({
      // The same id as long as the post keeps its time: a second import adds nothing.
      id: kept.get(key(post.slug, publishedAt)) ?? newMessageId(),
      siteId,
      type: "post.published",
      occurredAt: publishedAt,
      subject: post.slug,
      data: JSON.stringify({
        siteId,
        slug: post.slug,
        publishedAt: new Date(publishedAt).toISOString(),
      }),
    });
  }
  return await enqueueMessages(tx, CONTENT_SCHEMA, { messages, createdAt: now });
}

/**
 * The feed's records of an import: its content change, and its scheduled
 * posts, those already recorded at the same time kept (with their sequence
 * numbers), the others still ahead dropped.
 */
async function recordChanges(
  tx: Queryable,
  change: { siteId: string; changed?: ContentChanges; scheduled: Post[]; now: number },
): Promise<void> {
  const { siteId, changed, scheduled, now } = change;
  const iso = (ms: number) => new Date(ms).toISOString();
  if (changed) {
    await tx.query(
      `insert into content.changes (site_id, kind, at, names)
       values ($1, 'content', $2::timestamptz, $3::json)`,
      [siteId, iso(now), JSON.stringify(changed)],
    );
  }
  const ahead = await tx.query<{ seq: string | number; slug: string; at: Date }>(
    `select seq, slug, at from content.changes
      where site_id = $1 and kind = 'post' and at > $2::timestamptz`,
    [siteId, iso(now)],
  );
  const wanted = new Set(scheduled.map((p) => key(p.slug, p.publishedAt!)));
  const kept = new Set<string>();
  for (const row of ahead) {
    const k = key(row.slug, new Date(row.at).getTime());
    if (wanted.has(k)) kept.add(k);
    else await tx.query("delete from content.changes where seq = $1", [Number(row.seq)]);
  }
  for (const post of scheduled) {
    if (kept.has(key(post.slug, post.publishedAt!))) continue;
    const names: ContentChanges = { pages: [], sections: [], blocks: [], posts: [post.slug] };
    await tx.query(
      `insert into content.changes (site_id, kind, at, slug, names)
       values ($1, 'post', $2::timestamptz, $3, $4::json)`,
      [siteId, iso(post.publishedAt!), post.slug, JSON.stringify(names)],
    );
  }
}
