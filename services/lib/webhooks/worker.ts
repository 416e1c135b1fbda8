/**
 * The delivery worker of one outbox (outbox.ts). Every replica of the
 * service runs one; together they deliver each message at least once, and
 * never make the same attempt twice at once:
 *
 * - A claim is one short transaction: it takes the outbox's claim lock (a
 *   transaction-scoped advisory lock, so claims of all replicas take turns),
 *   picks due pending deliveries with `FOR UPDATE SKIP LOCKED` (rows an
 *   import is changing are skipped, not waited for), and gives each a lease:
 *   its attempt number goes up and it belongs to this worker until the lease
 *   ends. No transaction stays open during the HTTP call (PGlite has one
 *   connection, and Postgres connections are few).
 * - The attempt's result is recorded with its lease: the attempt joins the
 *   log, and the delivery becomes delivered, failed (retried for 24 hours,
 *   schedule.ts) or pending again with its next time. A worker that died
 *   mid-attempt records nothing; its lease ends LEASE_MS after the claim and
 *   another replica (or the restarted one) makes the attempt again: at least
 *   once, never twice at once (a lease outlives the attempt's 10 s timeout).
 * - At most PER_URL attempts to one URL run at once across the replicas
 *   (counted under the claim lock from the live leases), and MAX_IN_FLIGHT
 *   in one worker.
 *
 * Decisions by time (what is due, leases, retries, the `webhook-timestamp`)
 * read the injected clock; the worker's pacing and the attempt's timeout are
 * I/O and use real time. The worker looks for due deliveries when told that
 * something was enqueued (`nudge`, after the enqueuing transaction
 * committed), when its own next retry falls due, every POLL_MS while its
 * outbox holds pending deliveries (a post scheduled ahead, a retry, another
 * replica's lease running out), and only every IDLE_POLL_MS while it holds
 * none, so an idle service does not query storage every second; that slow
 * look finds what a replica that died left behind.
 */
import type { Database } from "../db/mod.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { WebhookSettings } from "../config.ts";
import { detached, sharedWork, SITE_ID } from "../telemetry.ts";
import { NudgedLoop } from "../nudged_loop.ts";
import { nextAttemptAt } from "./schedule.ts";
import { BacklogWatch } from "./backlog.ts";
import { type AttemptResult, type Resolve, sendAttempt } from "./send.ts";
import { signWebhook } from "./signature.ts";

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a claimed delivery belongs to its worker: well past the attempt's timeout. */
export const LEASE_MS = 30_000;
export const POLL_MS = 1_000;
/** How often a worker whose outbox held nothing pending looks again, untold. */
export const IDLE_POLL_MS = 60_000;
/** A retry due within this is woken for by a timer of its own. */
const WAKE_WITHIN_MS = 60_000;
/** The most attempts to one URL at once, across the replicas of a service. */
export const PER_URL = 3;
const MAX_IN_FLIGHT = 16;
/** How long delivered and failed messages and every attempt stay for `webhooks log`. */
export const LOG_KEEP_MS = 30 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

export interface WorkerOptions {
  db: Database;
  schema: string;
  clock: Clock;
  log: Logger;
  settings: WebhookSettings;
  /** Name resolution for the attempts (node:dns unless a test gives another). */
  resolve?: Resolve;
  /** Draws the retries' jitter. */
  random?: () => number;
  pollMs?: number;
}

interface Claimed {
  messageId: string;
  url: string;
  siteId: string;
  attempt: number;
  firstAttemptAt: number;
  lease: string;
  type: string;
  occurredAt: number;
  data: string;
  secret: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();
const time = (value: unknown) => new Date(value as string | Date).getTime();

/** The body of a delivery: the message's data text kept as stored. */
export function messageBody(type: string, occurredAt: number, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(iso(occurredAt))},` +
    `"data":${data}}`;
}

export class WebhookWorker {
  readonly #options: WorkerOptions;
  readonly #s: string;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  readonly #loop = new NudgedLoop(
    () => this.#tick(),
    () => this.#pending ? this.#options.pollMs ?? POLL_MS : IDLE_POLL_MS,
  );
  /** Whether the outbox held pending deliveries at the last look (true until one was made). */
  #pending = true;
  #prune: ReturnType<typeof setInterval> | undefined;
  #wake: ReturnType<typeof setTimeout> | undefined;
  #wakeAt = Infinity;
  #backlog: BacklogWatch | undefined;

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.#s = options.schema;
  }

  start(): void {
    this.#prune = setInterval(() => this.#pruneOld(), PRUNE_EVERY_MS);
    const { db, schema, clock, log } = this.#options;
    this.#backlog ??= new BacklogWatch({ db, schema, clock, log });
    this.nudge();
  }

  /** Looks for due deliveries now (after a commit that enqueued some). */
  nudge(): void {
    this.#loop.nudge();
  }

  /** Stops claiming, gives up the attempts in flight (recorded, to be made again) and waits for them. */
  async close(): Promise<void> {
    clearInterval(this.#prune);
    clearTimeout(this.#wake);
    this.#backlog?.close();
    this.#stop.abort();
    await this.#loop.close();
    await Promise.all(this.#inFlight.values());
  }

  async #tick(): Promise<void> {
    const room = MAX_IN_FLIGHT - this.#inFlight.size;
    if (room <= 0) return;
    let claimed: Claimed[];
    try {
      claimed = await this.#claim(room);
    } catch (error) {
      // Not migrated yet, or storage away for a moment: the next poll tries again soon.
      this.#options.log.debug("webhook claim", { schema: this.#s, error: String(error) });
      this.#pending = true;
      return;
    }
    for (const delivery of claimed) {
      const key = `${delivery.messageId} ${delivery.url}`;
      const work = this.#deliver(delivery)
        .catch((error) =>
          this.#options.log.warn("webhook delivery not recorded", {
            schema: this.#s,
            id: delivery.messageId,
            error: String(error),
          })
        )
        .finally(() => {
          this.#inFlight.delete(key);
          // Room for another, or another of the same URL.
          this.nudge();
        });
      this.#inFlight.set(key, work);
    }
    if (claimed.length === room) this.#loop.again();
  }

  async #claim(limit: number): Promise<Claimed[]> {
    const s = this.#s;
    const now = this.#options.clock.now();
    const mine = JSON.stringify([...this.#inFlight.keys()]);
    const lease = crypto.randomUUID();
    return await this.#options.db.transaction(async (tx) => {
      await tx.query("select pg_advisory_xact_lock(hashtext($1))", [`crm-webhooks-claim-${s}`]);
      // Attempts in flight now, per URL, across the replicas (their leases).
      const busy = new Map(
        (await tx.query<{ url: string; attempts: number }>(
          `select url, count(*)::int as attempts from ${s}.webhook_deliveries
            where state = 'pending' and lease_until > $1
            group by url`,
          [iso(now)],
        )).map((r) => [r.url, r.attempts]),
      );
      const full = [...busy].filter(([, n]) => n >= PER_URL).map(([url]) => url);
      // The earliest due of each URL that has room, a few per URL, so one URL's backlog
      // never keeps the others waiting.
      const due = await tx.query<{ site_id: string; message_id: string; url: string }>(
        `select d.site_id, d.message_id, d.url from ${s}.webhook_deliveries d
          where (d.site_id, d.message_id, d.url) in (
            select site_id, message_id, url from (
              select site_id, message_id, url, next_at,
                     row_number() over (partition by url order by next_at) as k
                from ${s}.webhook_deliveries
               where state = 'pending' and next_at <= $1
                 and (lease_until is null or lease_until <= $1)
                 and not (url in (select value from json_array_elements_text($4::json)))
                 and not (message_id || ' ' || url
                          in (select value from json_array_elements_text($3::json)))
            ) c
            where c.k <= $5
            order by c.next_at
            limit $2)
          order by d.next_at
          for update skip locked`,
        [iso(now), limit * 2, mine, JSON.stringify(full), PER_URL],
      );
      if (due.length === 0) {
        const [{ pending }] = await tx.query<{ pending: boolean }>(
          `select exists (select 1 from ${s}.webhook_deliveries where state = 'pending') as pending`,
        );
        this.#pending = pending;
        return [];
      }
      this.#pending = true;
      const chosen: { site_id: string; message_id: string; url: string }[] = [];
      for (const d of due) {
        if (chosen.length === limit) break;
        const n = busy.get(d.url) ?? 0;
        if (n >= PER_URL) continue;
        busy.set(d.url, n + 1);
        chosen.push(d);
      }
      if (chosen.length === 0) return [];
      const rows = await tx.query<{
        message_id: string;
        url: string;
        site_id: string;
        attempts: number;
        first_attempt_at: Date | string;
        type: string;
        occurred_at: Date | string;
        data: string;
        secret: string | null;
      }>(
        `with claimed as (
           update ${s}.webhook_deliveries d
              set attempts = d.attempts + 1, lease = $2, lease_until = $3::timestamptz,
                  first_attempt_at = coalesce(d.first_attempt_at, $4::timestamptz)
             from json_to_recordset($1::json) as r(site_id text, message_id text, url text)
            where d.site_id = r.site_id and d.message_id = r.message_id and d.url = r.url
           returning d.message_id, d.url, d.site_id, d.attempts, d.first_attempt_at
         )
         select c.*, m.type, m.occurred_at, m.data::text as data, w.secret
           from claimed c
           join ${s}.webhook_messages m on m.site_id = c.site_id and m.id = c.message_id
           left join ${s}.webhooks w on w.site_id = c.site_id and w.url = c.url`,
        [JSON.stringify(chosen), lease, iso(now + LEASE_MS), iso(now)],
      );
      return rows.map((r) => ({
        messageId: r.message_id,
        url: r.url,
        siteId: r.site_id,
        attempt: r.attempts,
        firstAttemptAt: time(r.first_attempt_at),
        lease,
        type: r.type,
        occurredAt: time(r.occurred_at),
        data: r.data,
        secret: r.secret,
      }));
    });
  }

  /** One attempt, a trace of its own (the request that caused the message is long answered). */
  #deliver(d: Claimed): Promise<void> {
    const attributes = {
      [SITE_ID]: d.siteId,
      "crm.webhook.type": d.type,
      "crm.webhook.id": d.messageId,
      "crm.webhook.attempt": d.attempt,
    };
    return sharedWork({ name: "webhook delivery", links: [], attributes }, async () => {
      const at = this.#options.clock.now();
      const result = await this.#attempt(d, at);
      await this.#record(d, at, result);
    });
  }

  async #attempt(d: Claimed, at: number): Promise<AttemptResult> {
    // The webhook left the manifest between the claim and now.
    if (d.secret === null) return { ok: false, status: null, error: "the webhook was removed" };
    const body = messageBody(d.type, d.occurredAt, d.data);
    const timestamp = Math.floor(at / 1000);
    const signature = await signWebhook(d.secret, { id: d.messageId, timestamp, body });
    return await sendAttempt({
      url: d.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "crm-webhooks",
        "webhook-id": d.messageId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature,
      },
      body,
      allowPrivate: this.#options.settings.allowPrivate,
      allowInsecure: this.#options.settings.allowInsecure,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      resolve: this.#options.resolve,
      signal: this.#stop.signal,
    });
  }

  async #record(d: Claimed, at: number, result: AttemptResult): Promise<void> {
    const s = this.#s;
    const now = this.#options.clock.now();
    const interrupted = this.#stop.signal.aborted && !result.ok;
    const next = result.ok || d.secret === null ? null : interrupted ? now : nextAttemptAt(
      { attempt: d.attempt, now, firstAttemptAt: d.firstAttemptAt },
      this.#options.random,
    );
    const state = result.ok ? "delivered" : next === null ? "failed" : "pending";
    await this.#options.db.transaction(async (tx) => {
      await tx.query(
        `insert into ${s}.webhook_attempts
           (site_id, message_id, type, url, attempt, status, error, at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [d.siteId, d.messageId, d.type, d.url, d.attempt, result.status, result.error, iso(at)],
      );
      // Only while the lease is this worker's: past it, another may have claimed the delivery.
      await tx.query(
        `update ${s}.webhook_deliveries
            set state = $4, next_at = coalesce($5::timestamptz, next_at), lease = null,
                lease_until = null
          where site_id = $6 and message_id = $1 and url = $2 and lease = $3`,
        [d.messageId, d.url, d.lease, state, next === null ? null : iso(next), d.siteId],
      );
    });
    if (state !== "delivered") {
      this.#options.log.info("webhook attempt failed", {
        id: d.messageId,
        url: d.url,
        attempt: d.attempt,
        status: result.status,
        error: result.error,
        next: next === null ? null : iso(next),
      });
    }
    if (next !== null) this.#wakeFor(next - now);
  }

  /**
   * Wakes when a retry soon to come falls due, rather than at the poll after
   * it (the first retry, 3 to 4 s after a failure, then leaves within 5 s).
   */
  #wakeFor(ms: number): void {
    if (ms > WAKE_WITHIN_MS || this.#stop.signal.aborted) return;
    const at = performance.now() + ms;
    if (at >= this.#wakeAt) return;
    clearTimeout(this.#wake);
    this.#wakeAt = at;
    this.#wake = setTimeout(() => {
      this.#wakeAt = Infinity;
      this.nudge();
    }, Math.max(0, ms));
  }

  async #pruneOld(): Promise<void> {
    const s = this.#s;
    const before = iso(this.#options.clock.now() - LOG_KEEP_MS);
    try {
      await detached(() =>
        this.#options.db.transaction(async (tx) => {
          await tx.query(`delete from ${s}.webhook_attempts where at < $1`, [before]);
          await tx.query(
            `delete from ${s}.webhook_messages m where m.created_at < $1
               and not exists (select 1 from ${s}.webhook_deliveries d
                                where d.site_id = m.site_id and d.message_id = m.id
                                  and d.state = 'pending')`,
            [before],
          );
        })
      );
    } catch (error) {
      this.#options.log.debug("webhook prune", { schema: s, error: String(error) });
    }
  }
}
