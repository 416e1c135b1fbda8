import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 23,
  name: "email reports, traffic alerts and their mail outbox",
  // A site's notifications as its manifest lists them, and the outbox of
  // mails (services/ingest/mail/outbox.ts): one row per recipient and period
  // or alert window, unique, so a mail is sent once across replicas and
  // restarts. The site's name names it in a mail's subject; its creation
  // time keeps drop alerts quiet for its first 12 hours (null: a site older
  // than this migration).
  sql: `
      alter table ingest.sites add column name text;
      alter table ingest.sites add column created_at timestamptz;
      create table ingest.email_reports (
        site_id text not null references ingest.sites (site_id) on delete cascade,
        recipient text not null,
        every text not null check (every in ('week', 'month')),
        position int not null,
        added_at timestamptz not null,
        primary key (site_id, recipient, every)
      );
      create table ingest.traffic_alerts (
        site_id text not null references ingest.sites (site_id) on delete cascade,
        recipient text not null,
        kind text not null check (kind in ('spike', 'drop')),
        threshold int not null,
        position int not null,
        fired_at timestamptz,
        primary key (site_id, recipient, kind, threshold)
      );
      create table ingest.mail_outbox (
        site_id text not null,
        id text not null,
        recipient text not null,
        kind text not null,
        period text not null,
        subject text not null,
        text_body text not null,
        html_body text not null,
        state text not null default 'pending' check (state in ('pending', 'sent', 'failed')),
        attempts int not null default 0,
        next_at timestamptz not null,
        first_attempt_at timestamptz,
        lease text,
        lease_until timestamptz,
        last_error text,
        sent_at timestamptz,
        created_at timestamptz not null,
        primary key (site_id, id),
        unique (site_id, recipient, kind, period)
      );
      create index mail_outbox_due on ingest.mail_outbox (next_at) where state = 'pending';
      create index mail_outbox_by_age on ingest.mail_outbox (created_at);
    `,
};
