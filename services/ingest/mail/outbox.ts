/**
 * The mail outbox, ingest.mail_outbox (migration 23), modelled on the
 * webhook outbox (services/lib/webhooks/): a mail is a row written before it
 * is sent, unique per site, recipient, kind and period (or alert window), so
 * replicas that both decide a report is due store it once, and a restart
 * finds what was not sent yet. Sending goes by claims:
 *
 * - A claim is one short transaction that picks due pending rows with
 *   `FOR UPDATE SKIP LOCKED` and gives each a lease (its attempt number goes
 *   up and it belongs to this worker until the lease ends). No transaction
 *   stays open while the SMTP server is talked to.
 * - The result is recorded under the lease: sent, pending again with the
 *   next try's time (a refused mail is retried for 24 hours, as a webhook
 *   is: services/lib/webhooks/schedule.ts), or failed. A worker that died
 *   mid-send records nothing; its lease ends and another replica sends it.
 */
import type { Database, Queryable } from "../../lib/db/mod.ts";
import type { Mail } from "./report_mail.ts";

/** What a mail is: which report or alert. */
export type MailKind = "report:week" | "report:month" | "alert:spike" | "alert:drop";

export interface NewMail {
  siteId: string;
  recipient: string;
  kind: MailKind;
  /** The period ("2026-11-16/2026-11-22") or alert window (when it fired, ISO). */
  period: string;
  mail: Mail;
}

export interface ClaimedMail extends Mail {
  siteId: string;
  id: string;
  recipient: string;
  kind: MailKind;
  attempt: number;
  firstAttemptAt: number;
  lease: string;
}

/** How long a claimed mail belongs to its worker: well past an SMTP conversation's timeouts. */
export const MAIL_LEASE_MS = 120_000;

const iso = (ms: number) => new Date(ms).toISOString();
const time = (value: unknown) => new Date(value as string | Date).getTime();

/** A new mail's id, also its Message-ID's left part. */
export function newMailId(): string {
  return `mail_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * Stores the mails that are not stored yet (one per site, recipient, kind
 * and period), due at `now`; answers how many were new.
 */
export async function enqueueMails(
  tx: Queryable,
  mails: readonly NewMail[],
  now: number,
): Promise<number> {
  if (mails.length === 0) return 0;
  const rows = mails.map((m) => ({
    id: newMailId(),
    site_id: m.siteId,
    recipient: m.recipient,
    kind: m.kind,
    period: m.period,
    subject: m.mail.subject,
    text_body: m.mail.text,
    html_body: m.mail.html,
  }));
  const inserted = await tx.query(
    `insert into ingest.mail_outbox
       (site_id, id, recipient, kind, period, subject, text_body, html_body, next_at, created_at)
     select r.site_id, r.id, r.recipient, r.kind, r.period, r.subject, r.text_body, r.html_body,
            $2::timestamptz, $2::timestamptz
       from json_to_recordset($1::json) as r(site_id text, id text, recipient text, kind text,
              period text, subject text, text_body text, html_body text)
     on conflict (site_id, recipient, kind, period) do nothing
     returning 1`,
    [JSON.stringify(rows), iso(now)],
  );
  return inserted.length;
}

/** The recipients that already have a mail of this kind and period (sent or not). */
export async function recipientsWithMail(
  q: Queryable,
  { siteId, kind, period }: { siteId: string; kind: MailKind; period: string },
): Promise<Set<string>> {
  const rows = await q.query<{ recipient: string }>(
    `select recipient from ingest.mail_outbox
      where site_id = $1 and kind = $2 and period = $3`,
    [siteId, kind, period],
  );
  return new Set(rows.map((r) => r.recipient));
}

/** Which mails a claim takes: every due one, or one site's of a kind and period, due or not. */
export interface ClaimFilter {
  siteId: string;
  kind: MailKind;
  period: string;
}

/** Leases up to `limit` pending mails that no live lease holds. */
export async function claimMails(
  db: Database,
  { now, limit, only }: { now: number; limit: number; only?: ClaimFilter },
): Promise<ClaimedMail[]> {
  const lease = crypto.randomUUID();
  const rows = await db.transaction((tx) =>
    tx.query<{
      site_id: string;
      id: string;
      recipient: string;
      kind: MailKind;
      subject: string;
      text_body: string;
      html_body: string;
      attempts: number;
      first_attempt_at: Date | string;
    }>(
      `with due as (
         select site_id, id from ingest.mail_outbox
          where state = 'pending'
            and (lease_until is null or lease_until <= $1::timestamptz)
            and ($5::text is not null or next_at <= $1::timestamptz)
            and ($5::text is null or (site_id = $5 and kind = $6 and period = $7))
          order by next_at
          limit $2
          for update skip locked
       )
       update ingest.mail_outbox m
          set attempts = m.attempts + 1, lease = $3, lease_until = $4::timestamptz,
              first_attempt_at = coalesce(m.first_attempt_at, $1::timestamptz)
         from due
        where m.site_id = due.site_id and m.id = due.id
       returning m.site_id, m.id, m.recipient, m.kind, m.subject, m.text_body, m.html_body,
                 m.attempts, m.first_attempt_at`,
      [
        iso(now),
        limit,
        lease,
        iso(now + MAIL_LEASE_MS),
        only?.siteId ?? null,
        only?.kind ?? null,
        only?.period ?? null,
      ],
    )
  );
  return rows.map((r) => ({
    siteId: r.site_id,
    id: r.id,
    recipient: r.recipient,
    kind: r.kind,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    attempt: r.attempts,
    firstAttemptAt: time(r.first_attempt_at),
    lease,
  }));
}

/**
 * Records a send under its lease: sent, pending until `nextAt`, or failed
 * (nextAt null after a refusal). Past the lease nothing is written: another
 * worker may hold the mail now.
 */
export async function recordSend(
  db: Database,
  mail: ClaimedMail,
  outcome: { sent: true; now: number } | { sent: false; error: string; nextAt: number | null },
): Promise<void> {
  const state = outcome.sent ? "sent" : outcome.nextAt === null ? "failed" : "pending";
  await db.query(
    `update ingest.mail_outbox
        set state = $4, lease = null, lease_until = null,
            sent_at = $5::timestamptz, last_error = $6,
            next_at = coalesce($7::timestamptz, next_at)
      where site_id = $1 and id = $2 and lease = $3`,
    [
      mail.siteId,
      mail.id,
      mail.lease,
      state,
      outcome.sent ? iso(outcome.now) : null,
      outcome.sent ? null : outcome.error.slice(0, 1000),
      !outcome.sent && outcome.nextAt !== null ? iso(outcome.nextAt) : null,
    ],
  );
}

/** Whether any mail waits to be sent (the worker polls faster while one does). */
export async function anyPending(q: Queryable): Promise<boolean> {
  const [row] = await q.query<{ pending: boolean }>(
    "select exists (select 1 from ingest.mail_outbox where state = 'pending') as pending",
  );
  return row?.pending ?? false;
}

/** How long sent and failed mails are kept. */
export const MAIL_KEEP_MS = 90 * 24 * 3600_000;

/** Deletes sent and failed mails older than MAIL_KEEP_MS (their periods are long past). */
export async function pruneMails(q: Queryable, now: number): Promise<void> {
  await q.query(
    "delete from ingest.mail_outbox where state <> 'pending' and created_at < $1",
    [iso(now - MAIL_KEEP_MS)],
  );
}
