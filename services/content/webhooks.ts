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
 */
import type { Queryable } from "../lib/db/mod.ts";
import {
  dropMessages,
  enqueueMessages,
  type NewMessage,
  newMessageId,
  scheduledMessages,
} from "../lib/webhooks/outbox.ts";
import { contentChanges } from "./changes.ts";
import { CONTENT_SCHEMA } from "./migrations.ts";
import type { SiteContent } from "./model.ts";

const key = (slug: string | null, at: number) => `${slug}\u0000${at}`;

/** Enqueues what the import from `before` to `after` at `now` tells; answers the deliveries added. */
export async function enqueueImportMessages(
  tx: Queryable,
  change: {
    siteId: string;
    before: SiteContent | undefined;
    after: SiteContent | undefined;
    now: number;
  },
): Promise<number> {
  const { siteId, before, after, now } = change;
  const messages: NewMessage[] = [];
  const changed = contentChanges(before, after, now);
  if (changed) {
    messages.push({
      id: newMessageId(),
      siteId,
      type: "content.published",
      occurredAt: now,
      data: JSON.stringify({ siteId, ...changed }),
    });
  }
  const scheduled = after?.blog.scheduling
    ? after.posts.filter((p) =>
      p.status === "published" && p.publishedAt !== null && p.publishedAt > now
    )
    : [];
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
