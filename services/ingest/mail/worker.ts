/**
 * Email reports and traffic alerts in one ingest process. Every replica runs
 * one; together they send each mail once (outbox.ts):
 *
 * - Once a minute it checks what is due: each recipient's report whose send
 *   time has come (schedule.ts; only with SMTP_URL), and each traffic alert
 *   (alerts.ts), with the numbers of the reports engine. A due mail is written
 *   to the outbox, once per recipient and period whichever replica writes it
 *   first; an alert's firing is decided under a lock on the site's alerts, so
 *   one replica fires it and writes its mails and its traffic.* webhook
 *   messages in that transaction.
 * - It sends what the outbox holds, under leases: after a check that wrote
 *   mails, every POLL_MS while mails wait for a retry, and every
 *   IDLE_POLL_MS otherwise (what a replica that died left behind).
 *
 * Decisions by time (what is due, leases, retries, quiet periods) read the
 * injected clock; the pacing uses real timers.
 */
import type { Database } from "../../lib/db/mod.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { detached } from "../../lib/telemetry.ts";
import { NudgedLoop } from "../../lib/nudged_loop.ts";
import { enqueueMessages, newMessageId } from "../../lib/webhooks/outbox.ts";
import { nextAttemptAt } from "../../lib/webhooks/schedule.ts";
import {
  alertData,
  type AlertKind,
  fires,
  oldEnough,
  QUIET_MS,
  WINDOW_MINUTES,
  windowOf,
} from "./alerts.ts";
import {
  type ClaimedMail,
  type ClaimFilter,
  claimMails,
  enqueueMails,
  type MailKind,
  type NewMail,
  pruneMails,
  recipientsWithMail,
  recordSend,
} from "./outbox.ts";
import { alertMail, type Mail, reportMail } from "./report_mail.ts";
import { type AnswerQuery, reportNumbers } from "./report_numbers.ts";
import {
  duePeriod,
  type Every,
  lastCompletePeriod,
  type Period,
  periodKey,
  previousPeriod,
} from "./schedule.ts";
import type { MailTransport } from "./transport.ts";

type Json = Parameters<AnswerQuery>[0][string];

/** What the worker reads of the reports engine, one site at a time. */
export interface SiteStats {
  /** A query body's public answer (POST /stats/v1/query). */
  answer(siteId: string, body: Record<string, Json>): Promise<Json>;
  /** The visitors of [startMs, endMs), counted as a realtime range counts them. */
  visitors(siteId: string, window: { startMs: number; endMs: number }): Promise<number>;
  /** When the site's first stored row was received, or undefined without one. */
  firstDataMs(siteId: string): Promise<number | undefined>;
}

export interface MailWorkerOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  /** Undefined without SMTP_URL: no mail is written or sent (alerts still reach webhooks). */
  transport?: MailTransport;
  /** MAIL_FROM. */
  from: string;
  /** PUBLIC_URL (read when a mail is written: `deno task start` knows it once the gateway listens). */
  publicUrl: () => string;
  stats: SiteStats;
  /** Told after traffic.* webhook messages were committed. */
  webhooksEnqueued: () => void;
  /** How often reports and alerts are checked (a minute unless a test says otherwise). */
  checkMs?: number;
  pollMs?: number;
  /** Draws the retries' jitter. */
  random?: () => number;
}

export const CHECK_MS = 60_000;
export const POLL_MS = 5_000;
export const IDLE_POLL_MS = 60_000;
const BATCH = 8;
const PRUNE_EVERY_MS = 3600_000;

interface SiteRow {
  site_id: string;
  time_zone: string | null;
  name: string | null;
}

const time = (value: unknown) => new Date(value as string | Date).getTime();
const iso = (ms: number) => new Date(ms).toISOString();
const reportKind = (every: Every): MailKind => every === "week" ? "report:week" : "report:month";

export class MailWorker {
  readonly #o: MailWorkerOptions;
  readonly #stop = new AbortController();
  #checkTimer: ReturnType<typeof setTimeout> | undefined;
  #checking: Promise<void> | undefined;
  readonly #sending = new NudgedLoop(
    () => this.#sendDue(),
    () => this.#pending ? this.#o.pollMs ?? POLL_MS : IDLE_POLL_MS,
  );
  #pending = true;
  #lastPrune = 0;

  constructor(options: MailWorkerOptions) {
    this.#o = options;
  }

  start(): void {
    this.#scheduleCheck(0);
    this.nudge();
  }

  async close(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#checkTimer);
    const sending = this.#sending.close();
    await this.#checking;
    await sending;
    this.#o.transport?.close();
  }

  /** Sends what is due now (after mails were written). */
  nudge(): void {
    this.#sending.nudge();
  }

  #scheduleCheck(ms: number): void {
    if (this.#stop.signal.aborted) return;
    this.#checkTimer = setTimeout(() => {
      this.#checking = detached(() => this.check()).finally(() => {
        this.#checking = undefined;
        this.#scheduleCheck(this.#o.checkMs ?? CHECK_MS);
      });
    }, ms);
  }

  /** One check: reports due and alerts firing now. Failures are logged; the next check retries. */
  async check(): Promise<void> {
    const now = this.#o.clock.now();
    try {
      const wrote = (this.#o.transport ? await this.scheduleReports(now) : 0) +
        await this.checkAlerts(now);
      if (wrote > 0) this.nudge();
      if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
        this.#lastPrune = now;
        await pruneMails(this.#o.db, now);
      }
    } catch (error) {
      // Not migrated yet, or storage away for a moment: the next check tries again.
      this.#o.log.debug("mail check", { error: String(error) });
    }
  }

  async #site(siteId: string): Promise<SiteRow | undefined> {
    const [site] = await this.#o.db.query<SiteRow & Record<string, unknown>>(
      "select site_id, time_zone, name from ingest.sites where site_id = $1",
      [siteId],
    );
    return site;
  }

  #dashboardUrl(): string {
    return `${this.#o.publicUrl()}/dashboard/`;
  }

  /** The report of one site and period, its numbers read from the reports engine. */
  async #report(site: SiteRow, period: Period): Promise<Mail> {
    const zone = site.time_zone ?? "UTC";
    const previous = previousPeriod(period, zone);
    const numbers = await reportNumbers(
      (body) => this.#o.stats.answer(site.site_id, body),
      {
        first: period.first,
        last: period.last,
        previousFirst: previous.first,
        previousLast: previous.last,
      },
    );
    return reportMail({
      siteName: site.name ?? site.site_id,
      every: period.every,
      first: period.first,
      last: period.last,
      previousFirst: previous.first,
      previousLast: previous.last,
      timeZone: zone,
      dashboardUrl: this.#dashboardUrl(),
      numbers,
    });
  }

  /**
   * Writes the report of `period` for each recipient that has none yet;
   * answers how many were written. The report is composed once for all.
   */
  async #writeReports(site: SiteRow, period: Period, recipients: string[]): Promise<number> {
    const kind = reportKind(period.every);
    const key = periodKey(period);
    const have = await recipientsWithMail(this.#o.db, { siteId: site.site_id, kind, period: key });
    const missing = recipients.filter((r) => !have.has(r));
    if (missing.length === 0) return 0;
    const mail = await this.#report(site, period);
    const mails: NewMail[] = missing.map((recipient) => ({
      siteId: site.site_id,
      recipient,
      kind,
      period: key,
      mail,
    }));
    return await enqueueMails(this.#o.db, mails, this.#o.clock.now());
  }

  /** Writes every report whose send time has come and that its recipient has not had. */
  async scheduleReports(now: number): Promise<number> {
    const rows = await this.#o.db.query<{
      site_id: string;
      recipient: string;
      every: Every;
      added_at: Date | string;
      time_zone: string | null;
      name: string | null;
    }>(
      `select r.site_id, r.recipient, r.every, r.added_at, s.time_zone, s.name
         from ingest.email_reports r join ingest.sites s on s.site_id = r.site_id
        order by r.site_id, r.position`,
    );
    // Recipients by site and due period.
    const groups = new Map<string, { site: SiteRow; period: Period; recipients: string[] }>();
    for (const row of rows) {
      const zone = row.time_zone ?? "UTC";
      const period = duePeriod(row.every, zone, { nowMs: now, sinceMs: time(row.added_at) });
      if (!period) continue;
      const key = `${row.site_id} ${row.every} ${periodKey(period)}`;
      const group = groups.get(key) ??
        {
          site: { site_id: row.site_id, time_zone: row.time_zone, name: row.name },
          period,
          recipients: [],
        };
      group.recipients.push(row.recipient);
      groups.set(key, group);
    }
    let written = 0;
    for (const { site, period, recipients } of groups.values()) {
      try {
        written += await this.#writeReports(site, period, recipients);
      } catch (error) {
        this.#o.log.warn("email report not written", {
          siteId: site.site_id,
          period: periodKey(period),
          error: String(error),
        });
      }
    }
    return written;
  }

  /**
   * `admin reports send`: the site's reports of the last complete period
   * (of `every`, or each recipient's own), written where missing and sent
   * now to every recipient that has not had them; answers the mails the
   * SMTP server accepted.
   */
  async sendReports(siteId: string, every?: Every): Promise<number> {
    const site = await this.#site(siteId);
    if (!site) throw new Error(`unknown site ${siteId}`);
    const rows = await this.#o.db.query<{ recipient: string; every: Every }>(
      `select recipient, every from ingest.email_reports
        where site_id = $1 and ($2::text is null or every = $2) order by position`,
      [siteId, every ?? null],
    );
    const now = this.#o.clock.now();
    let sent = 0;
    for (const each of ["week", "month"] as const) {
      const recipients = rows.filter((r) => r.every === each).map((r) => r.recipient);
      if (recipients.length === 0) continue;
      const period = lastCompletePeriod(each, site.time_zone ?? "UTC", now);
      await this.#writeReports(site, period, recipients);
      sent += await this.#sendNow({ siteId, kind: reportKind(each), period: periodKey(period) });
    }
    return sent;
  }

  /** Sends the pending mails of one site, kind and period at once, whatever their next try. */
  async #sendNow(only: ClaimFilter): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await claimMails(this.#o.db, {
        now: this.#o.clock.now(),
        limit: BATCH,
        only,
      });
      if (claimed.length === 0) return sent;
      for (const mail of claimed) if (await this.#send(mail)) sent++;
      if (claimed.length < BATCH) return sent;
    }
  }

  async #sendDue(): Promise<void> {
    if (!this.#o.transport) {
      this.#pending = false;
      return;
    }
    try {
      const claimed = await claimMails(this.#o.db, { now: this.#o.clock.now(), limit: BATCH });
      for (const mail of claimed) await this.#send(mail);
      if (claimed.length === BATCH) this.#sending.again();
      const [row] = await this.#o.db.query<{ pending: boolean }>(
        "select exists (select 1 from ingest.mail_outbox where state = 'pending') as pending",
      );
      this.#pending = row?.pending ?? false;
    } catch (error) {
      this.#o.log.debug("mail claim", { error: String(error) });
      this.#pending = true;
    }
  }

  /** One try of one mail, recorded; true when the server accepted it. */
  async #send(mail: ClaimedMail): Promise<boolean> {
    const transport = this.#o.transport;
    if (!transport) return false;
    const host = new URL(this.#o.publicUrl()).hostname.replace(/^\[|\]$/g, "") || "localhost";
    try {
      await transport.send({
        from: this.#o.from,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${mail.id}@${host}>`,
      });
    } catch (error) {
      const now = this.#o.clock.now();
      const nextAt = nextAttemptAt(
        { attempt: mail.attempt, now, firstAttemptAt: mail.firstAttemptAt },
        this.#o.random,
      );
      this.#o.log.warn("mail not accepted", {
        siteId: mail.siteId,
        id: mail.id,
        kind: mail.kind,
        attempt: mail.attempt,
        error: String(error),
        next: nextAt === null ? null : iso(nextAt),
      });
      await recordSend(this.#o.db, mail, { sent: false, error: String(error), nextAt });
      return false;
    }
    await recordSend(this.#o.db, mail, { sent: true, now: this.#o.clock.now() });
    return true;
  }

  /** Fires the alerts whose condition holds now; answers the mails written. */
  async checkAlerts(now: number): Promise<number> {
    const rows = await this.#o.db.query<{
      site_id: string;
      kind: AlertKind;
      threshold: number;
      fired_at: Date | string | null;
      created_at: Date | string | null;
    }>(
      `select a.site_id, a.kind, a.threshold, a.fired_at, s.created_at
         from ingest.traffic_alerts a join ingest.sites s on s.site_id = a.site_id
        order by a.site_id`,
    );
    const bySite = new Map<string, typeof rows>();
    for (const row of rows) bySite.set(row.site_id, [...(bySite.get(row.site_id) ?? []), row]);
    let written = 0;
    for (const [siteId, alerts] of bySite) {
      try {
        written += await this.#checkSite(siteId, alerts, now);
      } catch (error) {
        this.#o.log.warn("traffic alerts not checked", { siteId, error: String(error) });
      }
    }
    return written;
  }

  async #checkSite(
    siteId: string,
    alerts: {
      kind: AlertKind;
      threshold: number;
      fired_at: Date | string | null;
      created_at: Date | string | null;
    }[],
    now: number,
  ): Promise<number> {
    const counted = new Map<AlertKind, number>();
    const visitors = async (kind: AlertKind) => {
      if (!counted.has(kind)) {
        counted.set(kind, await this.#o.stats.visitors(siteId, windowOf(kind, now)));
      }
      return counted.get(kind)!;
    };
    const state = (a: (typeof alerts)[number]) => ({
      kind: a.kind,
      threshold: a.threshold,
      firedAt: a.fired_at === null ? null : time(a.fired_at),
    });
    let old: boolean | undefined;
    const siteOldEnough = async (created: Date | string | null) => {
      if (old === undefined) {
        const createdMs = created === null ? null : time(created);
        const first = createdMs === null ? undefined : await this.#o.stats.firstDataMs(siteId);
        old = oldEnough(
          createdMs === null ? null : Math.min(createdMs, first ?? createdMs),
          now,
        );
      }
      return old;
    };
    let any = false;
    for (const alert of alerts) {
      if (alert.kind === "drop" && !(await siteOldEnough(alert.created_at))) continue;
      const s = state(alert);
      if (s.firedAt !== null && now - s.firedAt < QUIET_MS) continue;
      if (fires(s, await visitors(alert.kind), now)) any = true;
    }
    if (!any) return 0;
    return await this.#fire(siteId, counted, now);
  }

  /**
   * Fires, under a lock on the site's alert rows (so one replica does), the
   * alerts whose condition holds and whose quiet time is over: their mails
   * and one traffic.* webhook message per kind and threshold, written with
   * the firing in one transaction.
   */
  async #fire(siteId: string, counted: Map<AlertKind, number>, now: number): Promise<number> {
    const site = await this.#site(siteId);
    if (!site) return 0;
    const siteName = site.name ?? siteId;
    let written = 0;
    let messages = 0;
    await this.#o.db.transaction(async (tx) => {
      const locked = await tx.query<{
        recipient: string;
        kind: AlertKind;
        threshold: number;
        fired_at: Date | string | null;
      }>(
        `select recipient, kind, threshold, fired_at from ingest.traffic_alerts
          where site_id = $1 order by position for update`,
        [siteId],
      );
      const mails: NewMail[] = [];
      const hooks = new Map<string, { kind: AlertKind; threshold: number; visitors: number }>();
      for (const a of locked) {
        const visitors = counted.get(a.kind);
        if (visitors === undefined) continue;
        const firedAt = a.fired_at === null ? null : time(a.fired_at);
        if (!fires({ kind: a.kind, threshold: a.threshold, firedAt }, visitors, now)) continue;
        await tx.query(
          `update ingest.traffic_alerts set fired_at = $5
            where site_id = $1 and recipient = $2 and kind = $3 and threshold = $4`,
          [siteId, a.recipient, a.kind, a.threshold, iso(now)],
        );
        hooks.set(`${a.kind} ${a.threshold}`, { kind: a.kind, threshold: a.threshold, visitors });
        if (!this.#o.transport) continue;
        mails.push({
          siteId,
          recipient: a.recipient,
          kind: a.kind === "spike" ? "alert:spike" : "alert:drop",
          period: iso(now),
          mail: alertMail({
            siteName,
            kind: a.kind,
            visitors,
            threshold: a.threshold,
            windowMinutes: WINDOW_MINUTES[a.kind],
            dashboardUrl: this.#dashboardUrl(),
          }),
        });
      }
      written = await enqueueMails(tx, mails, now);
      messages = await enqueueMessages(tx, "ingest", {
        messages: [...hooks.values()].map((h) => ({
          id: newMessageId(),
          siteId,
          type: h.kind === "spike" ? "traffic.spike" : "traffic.drop",
          occurredAt: now,
          data: alertData({ siteId, ...h }),
        })),
        createdAt: now,
      });
    });
    if (messages > 0) this.#o.webhooksEnqueued();
    return written;
  }
}
