/**
 * The tables of a schema's webhook outbox (outbox.ts describes them): one
 * definition for every schema that has an outbox, so content's and ingest's
 * are the same tables. It is the text of migrations already applied in
 * installations (content 2, ingest 18), so it never changes: a change to the
 * outbox's tables is a new migration in each schema, and
 * services/lib/db/released_test.ts fails when an applied migration's text
 * changes.
 */

/** The statements that make the outbox's tables and indexes in `schema`. */
export function outboxTablesSql(schema: string): string {
  return `
    create table ${schema}.webhooks (
      site_id text not null,
      url text not null,
      events jsonb not null,
      secret text not null,
      position int not null,
      primary key (site_id, url)
    );
    create table ${schema}.webhook_messages (
      site_id text not null,
      id text not null,
      type text not null,
      occurred_at timestamptz not null,
      subject text,
      data json not null,
      created_at timestamptz not null,
      primary key (site_id, id)
    );
    create index webhook_messages_by_subject
      on ${schema}.webhook_messages (site_id, type, subject) where subject is not null;
    create index webhook_messages_by_age on ${schema}.webhook_messages (created_at);
    create table ${schema}.webhook_deliveries (
      site_id text not null,
      message_id text not null,
      url text not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
      attempts int not null default 0,
      next_at timestamptz not null,
      first_attempt_at timestamptz,
      lease text,
      lease_until timestamptz,
      primary key (site_id, message_id, url),
      foreign key (site_id, message_id)
        references ${schema}.webhook_messages (site_id, id) on delete cascade
    );
    create index webhook_deliveries_due
      on ${schema}.webhook_deliveries (next_at) where state = 'pending';
    create index webhook_deliveries_by_url
      on ${schema}.webhook_deliveries (url) where state = 'pending';
    create table ${schema}.webhook_attempts (
      site_id text not null,
      seq bigint generated always as identity,
      message_id text not null,
      type text not null,
      url text not null,
      attempt int not null,
      status int,
      error text,
      at timestamptz not null,
      primary key (site_id, seq)
    );
    create index webhook_attempts_by_time on ${schema}.webhook_attempts (site_id, at, seq);
    create index webhook_attempts_by_age on ${schema}.webhook_attempts (at);
  `;
}
