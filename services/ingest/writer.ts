/**
 * Writes one group of prepared items in one transaction, with one multi-row
 * statement per table (rows travel as one JSON array, read back with
 * json_to_recordset), so a group of any size costs the same few round trips.
 *
 * Order inside the transaction: visitors, sessions, page views, event ids,
 * events, leads. Sessions come before events and leads so an event can
 * inherit from a page view written in the same group; rows of keyed tables
 * are inserted in key order so concurrent transactions take their locks in
 * the same order and cannot deadlock each other.
 */
import type { Queryable } from "../lib/db/mod.ts";
import {
  type Attribution,
  type EventRow,
  type LeadRow,
  NO_ATTRIBUTION,
  type PageViewRow,
  type WriteItem,
  type WriteResult,
} from "./rows.ts";

const key = (site: string, id: string) => `${site}\u0000${id}`;
const json = (rows: unknown[]) => JSON.stringify(rows);
const byKey = <T extends { site_id: string }>(id: (row: T) => string) => (a: T, b: T) =>
  a.site_id < b.site_id
    ? -1
    : a.site_id > b.site_id
    ? 1
    : id(a) < id(b)
    ? -1
    : id(a) > id(b)
    ? 1
    : 0;

const ATTRIBUTION_COLUMNS =
  "channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ad_link";

function flatAttribution(a: Attribution) {
  return {
    channel: a.channel,
    utm_source: a.utm_source,
    utm_medium: a.utm_medium,
    utm_campaign: a.utm_campaign,
    utm_term: a.utm_term,
    utm_content: a.utm_content,
    ad_link: a.ad_link,
  };
}

/** What a page view, event or lead inherits from its session. */
interface SessionInfo {
  attribution: Attribution;
  /** The session's visitor, for rows sent with a session id alone (server events). */
  visitorId: string | null;
}

type SessionRow = Attribution & {
  site_id: string;
  session_id: string;
  visitor_id: string | null;
  [column: string]: unknown;
};

interface Indexed<T> {
  index: number;
  row: T;
}

export async function writeGroup(
  tx: Queryable,
  items: readonly WriteItem[],
): Promise<WriteResult[]> {
  const results: WriteResult[] = items.map(() => ({ duplicate: false }));
  const views: Indexed<PageViewRow>[] = [];
  const events: Indexed<EventRow>[] = [];
  const leads: Indexed<LeadRow>[] = [];
  items.forEach((item, index) => {
    if (item.kind === "view") views.push({ index, row: item.row });
    else if (item.kind === "event") events.push({ index, row: item.row });
    else leads.push({ index, row: item.row });
  });

  const newVisitor = await writeVisitors(tx, views);
  const sessions = await writeSessions(tx, views, [...events, ...leads].map((e) => e.row));
  await writePageViews(tx, views, newVisitor, sessions);
  await writeEvents(tx, events, sessions, results);
  await writeLeads(tx, leads, sessions, results);
  return results;
}

/** Inserts first-seen visitors; answers, per page view, whether its visitor is new. */
async function writeVisitors(
  tx: Queryable,
  views: Indexed<PageViewRow>[],
): Promise<Map<number, boolean | null>> {
  const out = new Map<number, boolean | null>();
  const first = new Map<string, PageViewRow>();
  for (const { row } of views) {
    if (row.visitor_id === null) continue;
    const k = key(row.site_id, row.visitor_id);
    if (!first.has(k)) first.set(k, row);
  }
  const firstSession = new Map<string, string | null>();
  const inserted = new Set<string>();
  if (first.size > 0) {
    const proposed = [...first.values()].sort(byKey((r) => r.visitor_id!)).map((r) => ({
      site_id: r.site_id,
      visitor_id: r.visitor_id,
      received_at: r.received_at,
      session_id: r.session_id,
    }));
    const added = await tx.query<{ site_id: string; visitor_id: string }>(
      `insert into ingest.visitors (site_id, visitor_id, first_seen, last_seen, first_session_id)
       select site_id, visitor_id, received_at, received_at, session_id
         from json_to_recordset($1::json)
           as r(site_id text, visitor_id text, received_at timestamptz, session_id text)
       on conflict do nothing
       returning site_id, visitor_id`,
      [json(proposed)],
    );
    for (const r of added) {
      const k = key(r.site_id, r.visitor_id);
      inserted.add(k);
      firstSession.set(k, first.get(k)!.session_id);
    }
    const known = proposed.filter((r) => !inserted.has(key(r.site_id, r.visitor_id!)));
    if (known.length > 0) {
      const rows = await tx.query<
        { site_id: string; visitor_id: string; first_session_id: string | null }
      >(
        `select v.site_id, v.visitor_id, v.first_session_id
           from ingest.visitors v
           join json_to_recordset($1::json) as r(site_id text, visitor_id text)
             on v.site_id = r.site_id and v.visitor_id = r.visitor_id`,
        [json(known.map((r) => ({ site_id: r.site_id, visitor_id: r.visitor_id })))],
      );
      for (const r of rows) firstSession.set(key(r.site_id, r.visitor_id), r.first_session_id);
    }
  }
  // New: the visitor's first session is this page view's session; without
  // session ids, only the page view that created the visitor is new.
  for (const { index, row } of views) {
    if (row.visitor_id === null) {
      out.set(index, null);
      continue;
    }
    const k = key(row.site_id, row.visitor_id);
    const session = firstSession.get(k);
    if (session !== undefined && session !== null && row.session_id !== null) {
      out.set(index, session === row.session_id);
    } else {
      out.set(index, inserted.has(k) && first.get(k) === row);
    }
  }
  return out;
}

/**
 * Inserts sessions first seen in this group (attributed by their first page
 * view) and returns the attribution of every session the group refers to.
 */
async function writeSessions(
  tx: Queryable,
  views: Indexed<PageViewRow>[],
  others: { site_id: string; session_id: string | null }[],
): Promise<Map<string, SessionInfo>> {
  const sessions = new Map<string, SessionInfo>();
  const first = new Map<string, PageViewRow>();
  for (const { row } of views) {
    if (row.session_id === null) continue;
    const k = key(row.site_id, row.session_id);
    if (!first.has(k)) first.set(k, row);
  }
  const startedVisitors: { site_id: string; visitor_id: string; received_at: string }[] = [];
  if (first.size > 0) {
    const proposed = [...first.values()].sort(byKey((r) => r.session_id!)).map((r) => ({
      site_id: r.site_id,
      session_id: r.session_id,
      visitor_id: r.visitor_id,
      started_at: r.received_at,
      ...flatAttribution(r.attribution),
      click_ids: r.attribution.click_ids,
      landing_url: r.url,
      referrer: r.referrer,
    }));
    const added = await tx.query<{ site_id: string; session_id: string }>(
      `insert into ingest.sessions
         (site_id, session_id, visitor_id, started_at, ${ATTRIBUTION_COLUMNS}, click_ids,
          landing_url, referrer)
       select site_id, session_id, visitor_id, started_at, ${ATTRIBUTION_COLUMNS},
              coalesce(click_ids, '{}'::json), landing_url, referrer
         from json_to_recordset($1::json) as r(
           site_id text, session_id text, visitor_id text, started_at timestamptz,
           channel text, utm_source text, utm_medium text, utm_campaign text, utm_term text,
           utm_content text, ad_link text, click_ids json, landing_url text, referrer text)
       on conflict do nothing
       returning site_id, session_id`,
      [json(proposed)],
    );
    for (const r of added) {
      const row = first.get(key(r.site_id, r.session_id))!;
      sessions.set(key(r.site_id, r.session_id), {
        attribution: row.attribution,
        visitorId: row.visitor_id,
      });
      if (row.visitor_id !== null) {
        startedVisitors.push({
          site_id: row.site_id,
          visitor_id: row.visitor_id,
          received_at: row.received_at,
        });
      }
    }
  }
  const wanted = new Map<string, { site_id: string; session_id: string }>();
  for (const r of [...views.map((v) => v.row), ...others]) {
    if (r.session_id === null) continue;
    const k = key(r.site_id, r.session_id);
    if (!sessions.has(k)) wanted.set(k, { site_id: r.site_id, session_id: r.session_id });
  }
  if (wanted.size > 0) {
    const rows = await tx.query<SessionRow>(
      `select s.site_id, s.session_id, s.visitor_id, s.channel, s.utm_source, s.utm_medium, s.utm_campaign,
              s.utm_term, s.utm_content, s.ad_link, s.click_ids
         from ingest.sessions s
         join json_to_recordset($1::json) as r(site_id text, session_id text)
           on s.site_id = r.site_id and s.session_id = r.session_id`,
      [json([...wanted.values()])],
    );
    for (const r of rows) {
      const { site_id, session_id, visitor_id, ...attribution } = r;
      sessions.set(key(site_id, session_id), { attribution, visitorId: visitor_id });
    }
  }
  if (startedVisitors.length > 0) {
    // A new session of a known visitor: the profile was seen again.
    await tx.query(
      `update ingest.visitors v set last_seen = r.received_at
         from json_to_recordset($1::json)
           as r(site_id text, visitor_id text, received_at timestamptz)
        where v.site_id = r.site_id and v.visitor_id = r.visitor_id
          and v.last_seen < r.received_at`,
      [json(startedVisitors.sort(byKey((r) => r.visitor_id)))],
    );
  }
  return sessions;
}

function sessionOf(
  sessions: Map<string, SessionInfo>,
  site: string,
  session: string | null,
): SessionInfo | undefined {
  return session === null ? undefined : sessions.get(key(site, session));
}

async function writePageViews(
  tx: Queryable,
  views: Indexed<PageViewRow>[],
  newVisitor: Map<number, boolean | null>,
  sessions: Map<string, SessionInfo>,
): Promise<void> {
  if (views.length === 0) return;
  const rows = views.map(({ index, row }) => {
    // Every page view of a session carries the attribution of its first one.
    const a = sessionOf(sessions, row.site_id, row.session_id)?.attribution ?? row.attribution;
    const { attribution: _own, ...rest } = row;
    return {
      ...rest,
      ...flatAttribution(a),
      click_ids: a.click_ids,
      new_visitor: newVisitor.get(index),
    };
  });
  await tx.query(
    `insert into ingest.page_views
       (site_id, received_at, visitor_id, session_id, url, title, referrer, ${ATTRIBUTION_COLUMNS},
        click_ids, ad_cookies, screen, viewport, pixel_ratio, language, time_zone, country, device,
        browser, os, new_visitor, bot, ip)
     select site_id, received_at, visitor_id, session_id, url, title, referrer,
            ${ATTRIBUTION_COLUMNS}, coalesce(click_ids, '{}'::json), coalesce(ad_cookies, '{}'::json),
            screen, viewport, pixel_ratio, language, time_zone, country, device, browser, os,
            new_visitor, bot, ip
       from json_to_recordset($1::json) as r(
         site_id text, received_at timestamptz, visitor_id text, session_id text, url text,
         title text, referrer text, channel text, utm_source text, utm_medium text,
         utm_campaign text, utm_term text, utm_content text, ad_link text, click_ids json,
         ad_cookies json, screen text, viewport text, pixel_ratio double precision,
         language text, time_zone text, country text, device text, browser text, os text,
         new_visitor boolean, bot boolean, ip text)`,
    [json(rows)],
  );
}

/**
 * An event or lead with a session id inherits the channel, UTM tags and ad
 * link of the session's first page view, and its visitor when none was sent.
 */
function inherit<
  T extends { site_id: string; session_id: string | null; visitor_id: string | null },
>(
  row: T,
  sessions: Map<string, SessionInfo>,
) {
  const session = sessionOf(sessions, row.site_id, row.session_id);
  return {
    ...row,
    visitor_id: row.visitor_id ?? session?.visitorId ?? null,
    ...flatAttribution(session?.attribution ?? NO_ATTRIBUTION),
  };
}

async function writeEvents(
  tx: Queryable,
  events: Indexed<EventRow>[],
  sessions: Map<string, SessionInfo>,
  results: WriteResult[],
): Promise<void> {
  if (events.length === 0) return;
  // An id seen earlier in this group is a duplicate of that item.
  const claims = new Map<string, Indexed<EventRow>>();
  for (const e of events) {
    if (e.row.event_id === null) continue;
    const k = key(e.row.site_id, e.row.event_id);
    if (claims.has(k)) results[e.index].duplicate = true;
    else claims.set(k, e);
  }
  if (claims.size > 0) {
    const proposed = [...claims.values()].map((e) => e.row).sort(byKey((r) => r.event_id!));
    const won = await tx.query<{ site_id: string; event_id: string }>(
      `insert into ingest.event_ids (site_id, event_id, received_at)
       select site_id, event_id, received_at
         from json_to_recordset($1::json)
           as r(site_id text, event_id text, received_at timestamptz)
       on conflict do nothing
       returning site_id, event_id`,
      [json(proposed.map((r) => ({
        site_id: r.site_id,
        event_id: r.event_id,
        received_at: r.received_at,
      })))],
    );
    const fresh = new Set(won.map((r) => key(r.site_id, r.event_id)));
    for (const [k, e] of claims) if (!fresh.has(k)) results[e.index].duplicate = true;
  }
  const stored = events.filter((e) => !results[e.index].duplicate);
  if (stored.length === 0) return;
  const rows = stored.map(({ row }) => inherit(row, sessions));
  await tx.query(
    `insert into ingest.events
       (site_id, received_at, name, event_id, visitor_id, session_id, url, params, value,
        currency, source, ${ATTRIBUTION_COLUMNS}, bot)
     select site_id, received_at, name, event_id, visitor_id, session_id, url,
            coalesce(params, '{}'::json), value, currency, source, ${ATTRIBUTION_COLUMNS}, bot
       from json_to_recordset($1::json) as r(
         site_id text, received_at timestamptz, name text, event_id text, visitor_id text,
         session_id text, url text, params json, value bigint, currency text, source text,
         channel text, utm_source text, utm_medium text, utm_campaign text, utm_term text,
         utm_content text, ad_link text, bot boolean)`,
    [json(rows)],
  );
  // The first event of a type locks its name: an import that drops the type archives it.
  const types = new Map<string, { site_id: string; name: string }>();
  for (const { row } of stored) types.set(key(row.site_id, row.name), row);
  await tx.query(
    `update ingest.event_types t set first_event_at = now()
       from json_to_recordset($1::json) as r(site_id text, name text)
      where t.site_id = r.site_id and t.name = r.name and t.first_event_at is null`,
    [json([...types.values()].map((t) => ({ site_id: t.site_id, name: t.name })))],
  );
}

async function writeLeads(
  tx: Queryable,
  leads: Indexed<LeadRow>[],
  sessions: Map<string, SessionInfo>,
  results: WriteResult[],
): Promise<void> {
  if (leads.length === 0) return;
  const claims = new Map<string, Indexed<LeadRow>>();
  const proposed: Indexed<LeadRow>[] = [];
  for (const l of leads) {
    results[l.index].id = l.row.id;
    if (l.row.lead_id !== null) {
      const k = key(l.row.site_id, l.row.lead_id);
      if (claims.has(k)) {
        results[l.index].duplicate = true;
        continue;
      }
      claims.set(k, l);
    }
    proposed.push(l);
  }
  const rows = proposed.map(({ row }) => inherit(row, sessions))
    .sort(byKey((r) => r.lead_id ?? ""));
  const added = await tx.query<{ id: string }>(
    `insert into ingest.leads
       (id, site_id, received_at, lead_id, source, form, name, email, phone, message, fields,
        visitor_id, session_id, url, ${ATTRIBUTION_COLUMNS})
     select id, site_id, received_at, lead_id, source, form, name, email, phone, message,
            coalesce(fields, '{}'::json), visitor_id, session_id, url, ${ATTRIBUTION_COLUMNS}
       from json_to_recordset($1::json) as r(
         id uuid, site_id text, received_at timestamptz, lead_id text, source text, form text,
         name text, email text, phone text, message text, fields json, visitor_id text,
         session_id text, url text, channel text, utm_source text, utm_medium text,
         utm_campaign text, utm_term text, utm_content text, ad_link text)
     on conflict do nothing
     returning id::text as id`,
    [json(rows)],
  );
  const fresh = new Set(added.map((r) => r.id));
  const lost = proposed.filter((l) => !fresh.has(l.row.id));
  if (lost.length > 0) {
    // The lead id was used before: answer with the stored lead's id.
    const existing = await tx.query<{ site_id: string; lead_id: string; id: string }>(
      `select l.site_id, l.lead_id, l.id::text as id
         from ingest.leads l
         join json_to_recordset($1::json) as r(site_id text, lead_id text)
           on l.site_id = r.site_id and l.lead_id = r.lead_id`,
      [json(lost.map((l) => ({ site_id: l.row.site_id, lead_id: l.row.lead_id })))],
    );
    const ids = new Map(existing.map((r) => [key(r.site_id, r.lead_id), r.id]));
    for (const l of lost) {
      results[l.index].duplicate = true;
      results[l.index].id = ids.get(key(l.row.site_id, l.row.lead_id!)) ?? l.row.id;
    }
  }
  for (const l of leads) {
    if (!results[l.index].duplicate || l.row.lead_id === null) continue;
    const winner = claims.get(key(l.row.site_id, l.row.lead_id));
    if (winner && winner !== l) results[l.index].id = results[winner.index].id;
  }
}
