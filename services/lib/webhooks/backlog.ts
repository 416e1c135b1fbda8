/**
 * An outbox's backlog as gauges, per outbox (`crm.webhooks.outbox`: the
 * schema, content or ingest), read from storage every BACKLOG_EVERY_MS by
 * each worker (every replica reads the same outbox, so every replica reports
 * the same figures):
 *
 * - `crm.webhooks.backlog`: deliveries not yet delivered (pending: waiting
 *   for their first attempt or a retry, or being attempted);
 * - `crm.webhooks.backlog.age`: the age of the oldest message among them (0
 *   with none). A receiver that stays down keeps its messages here for the
 *   24 hours of retries (schedule.ts) and the last wait after them, at most
 *   32 hours; older means they are neither delivered nor given up;
 * - `crm.webhooks.backlog.overdue`: how long the most overdue delivery that
 *   is due and not being attempted has waited past its time (0 with none).
 *   Workers claim due deliveries within a second, so minutes mean they are
 *   not delivering (stopped, failing to claim) or a receiver takes every
 *   attempt's 10 s while its backlog grows (at most PER_URL at once).
 */
import type { Queryable } from "../db/mod.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { detached, gaugeOverInstances } from "../telemetry.ts";

/** How often a worker reads its outbox's backlog. */
export const BACKLOG_EVERY_MS = 60_000;
/** Until the first reading succeeds (the outbox may not be migrated yet), how soon to try again. */
const FIRST_READING_RETRY_MS = 1_000;

export interface Backlog {
  pending: number;
  oldestAgeS: number;
  overdueS: number;
}

/** The undelivered deliveries of `schema`'s outbox at `now` (Unix ms). */
export async function readBacklog(db: Queryable, schema: string, now: number): Promise<Backlog> {
  const [row] = await db.query<{ pending: number; oldest_age_s: number; overdue_s: number }>(
    `select count(*)::int as pending,
            coalesce(extract(epoch from $1::timestamptz - min(m.created_at)), 0)::float8
              as oldest_age_s,
            coalesce(extract(epoch from $1::timestamptz - min(d.next_at) filter (
              where d.next_at <= $1 and (d.lease_until is null or d.lease_until <= $1))), 0)::float8
              as overdue_s
       from ${schema}.webhook_deliveries d
       join ${schema}.webhook_messages m on m.site_id = d.site_id and m.id = d.message_id
      where d.state = 'pending'`,
    [new Date(now).toISOString()],
  );
  return {
    pending: Number(row.pending),
    oldestAgeS: Math.max(0, Number(row.oldest_age_s)),
    overdueS: Math.max(0, Number(row.overdue_s)),
  };
}

/** Reads one outbox's backlog now and then, for the gauges. */
export class BacklogWatch {
  /** The last figures read; undefined until the first read succeeds. */
  latest: Backlog | undefined;
  readonly #timer: ReturnType<typeof setInterval>;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #reading: Promise<void> | undefined;

  constructor(
    private readonly options: { db: Queryable; schema: string; clock: Clock; log: Logger },
  ) {
    for (const gauge of GAUGES) gauge.add(this);
    this.#timer = setInterval(() => this.read(), BACKLOG_EVERY_MS);
    this.read();
  }

  get schema(): string {
    return this.options.schema;
  }

  /**
   * Reads the backlog again; a failure (storage away, schema not migrated
   * yet) keeps the last figures, and before the first ones tries again soon.
   */
  read(): Promise<void> {
    const { db, schema, clock, log } = this.options;
    this.#reading ??= detached(() => readBacklog(db, schema, clock.now())).then(
      (backlog) => {
        this.latest = backlog;
      },
      (error) => {
        log.debug("webhook backlog not read", { schema, error: String(error) });
        if (!this.latest && !this.#closed) {
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.read(), FIRST_READING_RETRY_MS);
        }
      },
    ).finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#timer);
    for (const gauge of GAUGES) gauge.remove(this);
  }
}

/** One gauge of the backlog: per outbox, the largest figure over this process's watches. */
const backlogGauge = (
  name: string,
  description: string,
  unit: string,
  of: (b: Backlog) => number,
) =>
  gaugeOverInstances<BacklogWatch>(name, {
    description,
    unit,
    value: (watch) => watch.latest && of(watch.latest),
    pick: "highest",
    attributes: (watch) => ({ "crm.webhooks.outbox": watch.schema }),
  });

const GAUGES = [
  backlogGauge(
    "crm.webhooks.backlog",
    "Webhook deliveries not delivered yet, per outbox",
    "{delivery}",
    (b) => b.pending,
  ),
  backlogGauge(
    "crm.webhooks.backlog.age",
    "Age of the oldest webhook message not delivered yet, per outbox",
    "s",
    (b) => b.oldestAgeS,
  ),
  backlogGauge(
    "crm.webhooks.backlog.overdue",
    "How long the most overdue due webhook delivery has waited past its time, per outbox",
    "s",
    (b) => b.overdueS,
  ),
];
