/**
 * Writes one group of prepared items in one transaction, with one multi-row
 * statement per table (rows travel as one JSON array, read back with
 * json_to_recordset), so a group of any size costs the same few round trips.
 *
 * Order inside the transaction: visitors, sessions, page views, event ids,
 * events, leads. Sessions come before events and leads so an event can
 * inherit from a page view written in the same group; rows of keyed tables
 * are inserted in key order so concurrent transactions take their locks in
 * the same order and cannot deadlock each other. Columns and their types come
 * from the table descriptions (tables.ts).
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
import {
  ATTRIBUTION_COLUMNS,
  type AttributionColumn,
  EVENT_IDS,
  EVENTS,
  insertFromJson,
  LEADS,
  PAGE_VIEWS,
  recordOf,
  type RowOf,
  SESSIONS,
  VISITORS,
} from "./tables.ts";
import { insertWithUpkeep, recordChanges, VisitChanges } from "./stats/visits.ts";
import { enqueueLeadsCreated } from "./lead_webhooks.ts";

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

type FlatAttribution = Pick<Attribution, AttributionColumn>;

/** The attribution columns of a row (click ids are stored by sessions and page views only). */
function flatAttribution(a: Attribution): FlatAttribution {
  const flat = {} as FlatAttribution;
  for (const column of ATTRIBUTION_COLUMNS) flat[column] = a[column];
  return flat;
}

const INSERT_VISITORS = insertFromJson(VISITORS, {
  onConflict: "do nothing",
  returning: "site_id, visitor_id",
});
const INSERT_SESSIONS = insertFromJson(SESSIONS, {
  onConflict: "do nothing",
  returning: "site_id, session_id",
});
const INSERT_PAGE_VIEWS = insertFromJson(PAGE_VIEWS);
const INSERT_LEADS = insertFromJson(LEADS, { onConflict: "do nothing" });

/**
 * The events' statement, one round trip for what took three: it claims the
 * ids ($2, sorted by key: concurrent writers lock alike) and inserts the
 * events ($1) whose id it won or that have none, keeps their visits, and
 * marks the first event of a type (an import that drops the type then
 * archives it; once a type has one, that update matches no row and locks
 * nothing). It answers the ids won (`won`, a JSON array of [site, id]) and
 * the visits' changes.
 */
function eventsStatement(upkeep: boolean): string {
  const claimIds = `won as (${
    insertFromJson(EVENT_IDS, {
      param: 2,
      onConflict: "do nothing",
      returning: "site_id, event_id",
    })
  })`;
  const insert = insertFromJson(EVENTS, {
    where: `r.event_id is null or exists
      (select 1 from won w where w.site_id = r.site_id and w.event_id = r.event_id)`,
  });
  const firstOfType = `first_of_type as (
    update ingest.event_types t set first_event_at = now()
      from (select distinct site_id, name from ins) r
     where t.site_id = r.site_id and t.name = r.name and t.first_event_at is null)`;
  return insertWithUpkeep("event", insert, upkeep, {
    before: [claimIds],
    after: [firstOfType],
    answer: `(select json_agg(json_build_array(site_id, event_id)) from won)::text as won`,
  });
}
const EVENTS_WITH_UPKEEP = eventsStatement(true);
const EVENTS_WITHOUT_UPKEEP = eventsStatement(false);
const PAGE_VIEWS_WITH_UPKEEP = insertWithUpkeep("pageview", INSERT_PAGE_VIEWS, true);
const leadsStatement = (upkeep: boolean) =>
  insertWithUpkeep("lead", INSERT_LEADS, upkeep, { answer: "ins.id::text as id", from: "ins" });
const LEADS_WITH_UPKEEP = leadsStatement(true);
const LEADS_WITHOUT_UPKEEP = leadsStatement(false);

/** What a page view, event or lead inherits from its session. */
interface SessionInfo {
  attribution: Attribution;
  /** The session's visitor, for rows sent with a session id alone (server events). */
  visitorId: string | null;
}

const SESSION_INFO = [
  "site_id",
  "session_id",
  "visitor_id",
  ...ATTRIBUTION_COLUMNS,
  "click_ids",
] as const;
type SessionInfoRow = Pick<RowOf<typeof SESSIONS.columns>, typeof SESSION_INFO[number]>;

interface Indexed<T> {
  index: number;
  row: T;
  /** What a record brought in by history import says of itself (rows.ts, WriteItem). */
  given?: { newVisitor: boolean | null };
  attribution?: Attribution;
}

/** What the steps of one group's write share. */
interface GroupWrite {
  tx: Queryable;
  sessions: Map<string, SessionInfo>;
  results: WriteResult[];
  /** Keep the visits (false: only the ingest benchmark, to measure what the upkeep costs). */
  upkeep: boolean;
  /** What the statements changed, recorded at the end of the transaction. */
  changes: VisitChanges;
  /** Whether new leads are told (lead.created). */
  tellLeads: boolean;
}

/**
 * Writes the items; `upkeep` false leaves the visits alone (only the ingest
 * benchmark does, to measure what their upkeep costs).
 */
export async function writeGroup(
  connection: Queryable,
  items: readonly WriteItem[],
  options: {
    /** Keep the visits (true unless set). */
    upkeep?: boolean;
    /** The transaction ends with this group: its last statement is sent with the COMMIT. */
    endsTransaction?: boolean;
    /**
     * Queue lead.created for every new lead (true unless set). History
     * import does not: a restored or moved lead was told when it came.
     */
    tellLeads?: boolean;
  } = {},
): Promise<WriteResult[]> {
  const upkeep = options.upkeep ?? true;
  const tx = prepared(connection);
  const results: WriteResult[] = items.map(() => ({ duplicate: false }));
  const views: Indexed<PageViewRow>[] = [];
  const events: Indexed<EventRow>[] = [];
  const leads: Indexed<LeadRow>[] = [];
  items.forEach((item, index) => {
    if (item.kind === "view") views.push({ index, row: item.row, given: item.given });
    else if (item.kind === "event") {
      events.push({ index, row: item.row, attribution: item.attribution });
    } else leads.push({ index, row: item.row, attribution: item.attribution });
  });

  const newVisitor = await writeVisitors(tx, views);
  const sessions = await writeSessions(tx, views, [...events, ...leads].map((e) => e.row));
  const group: GroupWrite = {
    tx,
    sessions,
    results,
    upkeep,
    changes: new VisitChanges(),
    tellLeads: options.tellLeads ?? true,
  };
  await writePageViews(group, views, newVisitor);
  // Without upkeep nothing follows the events' statement in a group of events alone.
  const eventsLast = options.endsTransaction === true && !upkeep && views.length === 0 &&
    leads.length === 0;
  await writeEvents(group, events, { last: eventsLast });
  await writeLeads(group, leads);
  // Last: today's hot row of changed days is locked only until the commit that follows.
  await recordChanges(tx, group.changes, { last: options.endsTransaction });
  return results;
}

/**
 * Every statement of the writer has a fixed text (rows travel as JSON
 * parameters), so each is prepared once per connection instead of parsed
 * and planned for every batch: on Postgres that took durable ingest from
 * about 9,500 to 11,000 events a second (docs/benchmarks.md).
 */
const prepared = (tx: Queryable): Queryable => ({
  query: (text, params, options) => tx.query(text, params, { prepare: true, ...options }),
  exec: (script) => tx.exec(script),
});

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
    const proposed: RowOf<typeof VISITORS.columns>[] = [...first.values()]
      .sort(byKey((r) => r.visitor_id!))
      .map((r) => ({
        site_id: r.site_id,
        visitor_id: r.visitor_id!,
        first_seen: r.received_at,
        last_seen: r.received_at,
        first_session_id: r.session_id,
      }));
    const added = await tx.query<{ site_id: string; visitor_id: string }>(
      INSERT_VISITORS,
      [json(proposed)],
    );
    for (const r of added) {
      const k = key(r.site_id, r.visitor_id);
      inserted.add(k);
      firstSession.set(k, first.get(k)!.session_id);
    }
    const known = proposed.filter((r) => !inserted.has(key(r.site_id, r.visitor_id)));
    if (known.length > 0) {
      const rows = await tx.query<
        { site_id: string; visitor_id: string; first_session_id: string | null }
      >(
        `select v.site_id, v.visitor_id, v.first_session_id
           from ingest.visitors v
           join json_to_recordset($1::json) as ${recordOf(VISITORS, ["site_id", "visitor_id"])}
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
  const startedVisitors: Pick<
    RowOf<typeof VISITORS.columns>,
    "site_id" | "visitor_id" | "last_seen"
  >[] = [];
  if (first.size > 0) {
    const proposed: RowOf<typeof SESSIONS.columns>[] = [...first.values()]
      .sort(byKey((r) => r.session_id!))
      .map((r) => ({
        site_id: r.site_id,
        session_id: r.session_id!,
        visitor_id: r.visitor_id,
        started_at: r.received_at,
        ...flatAttribution(r.attribution),
        click_ids: r.attribution.click_ids,
        landing_url: r.url,
        referrer: r.referrer,
      }));
    const added = await tx.query<{ site_id: string; session_id: string }>(
      INSERT_SESSIONS,
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
          last_seen: row.received_at,
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
    const rows = await tx.query<SessionInfoRow>(
      `select ${SESSION_INFO.map((c) => `s.${c}`).join(", ")}
         from ingest.sessions s
         join json_to_recordset($1::json) as ${recordOf(SESSIONS, ["site_id", "session_id"])}
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
      `update ingest.visitors v set last_seen = r.last_seen
         from json_to_recordset($1::json)
           as ${recordOf(VISITORS, ["site_id", "visitor_id", "last_seen"])}
        where v.site_id = r.site_id and v.visitor_id = r.visitor_id
          and v.last_seen < r.last_seen`,
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
  group: GroupWrite,
  views: Indexed<PageViewRow>[],
  newVisitor: Map<number, boolean | null>,
): Promise<void> {
  if (views.length === 0) return;
  const { sessions } = group;
  // No page: the insert works it out from the URL (tables.ts, pageColumn).
  const rows: Omit<RowOf<typeof PAGE_VIEWS.columns>, "page">[] = views.map(
    ({ index, row, given }) => {
      // Every page view of a session carries the attribution of its first one (an imported
      // page view keeps its own).
      const a = given
        ? row.attribution
        : sessionOf(sessions, row.site_id, row.session_id)?.attribution ?? row.attribution;
      const { attribution: _own, ...rest } = row;
      return {
        ...rest,
        ...flatAttribution(a),
        click_ids: a.click_ids,
        new_visitor: given ? given.newVisitor : newVisitor.get(index) ?? null,
      };
    },
  );
  group.changes.take(
    await group.tx.query<{ changes?: string | null }>(
      group.upkeep ? PAGE_VIEWS_WITH_UPKEEP : INSERT_PAGE_VIEWS,
      [json(rows)],
    ),
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

/** An event or lead with the attribution its record gave (history import), else its session's. */
function attributed<
  T extends { site_id: string; session_id: string | null; visitor_id: string | null },
>({ row, attribution }: Indexed<T>, sessions: Map<string, SessionInfo>) {
  return attribution ? { ...row, ...flatAttribution(attribution) } : inherit(row, sessions);
}

async function writeEvents(
  group: GroupWrite,
  events: Indexed<EventRow>[],
  options: { last: boolean },
): Promise<void> {
  if (events.length === 0) return;
  const { sessions, results } = group;
  // An id seen earlier in this group is a duplicate of that item.
  const claims = new Map<string, Indexed<EventRow>>();
  for (const e of events) {
    if (e.row.event_id === null) continue;
    const k = key(e.row.site_id, e.row.event_id);
    if (claims.has(k)) results[e.index].duplicate = true;
    else claims.set(k, e);
  }
  const proposed: RowOf<typeof EVENT_IDS.columns>[] = [...claims.values()]
    .map(({ row }) => ({
      site_id: row.site_id,
      event_id: row.event_id!,
      received_at: row.received_at,
    }))
    .sort(byKey((r) => r.event_id));
  const candidates = events.filter((e) => !results[e.index].duplicate);
  const rows: Omit<RowOf<typeof EVENTS.columns>, "page">[] = candidates.map((e) =>
    attributed(e, sessions)
  );
  const answer = group.changes.take(
    await group.tx.query<{ won: string | null; changes?: string | null }>(
      group.upkeep ? EVENTS_WITH_UPKEEP : EVENTS_WITHOUT_UPKEEP,
      [json(rows), json(proposed)],
      { last: options.last },
    ),
  );
  const won = new Set(
    (JSON.parse(answer[0]?.won ?? "null") as [string, string][] | null ?? [])
      .map(([site, id]) => key(site, id)),
  );
  for (const [k, e] of claims) if (!won.has(k)) results[e.index].duplicate = true;
}

async function writeLeads(group: GroupWrite, leads: Indexed<LeadRow>[]): Promise<void> {
  if (leads.length === 0) return;
  const { tx, sessions, results } = group;
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
  const rows: RowOf<typeof LEADS.columns>[] = proposed.map((l) => attributed(l, sessions))
    .sort(byKey((r) => r.lead_id ?? ""));
  const added = group.changes.take(
    await tx.query<{ id: string; changes?: string | null }>(
      group.upkeep ? LEADS_WITH_UPKEEP : LEADS_WITHOUT_UPKEEP,
      [json(rows)],
    ),
  );
  const fresh = new Set(added.map((r) => r.id));
  if (group.tellLeads) await enqueueLeadsCreated(tx, rows.filter((r) => fresh.has(r.id)));
  const lost = proposed.filter((l) => !fresh.has(l.row.id));
  if (lost.length > 0) {
    // The lead id was used before: answer with the stored lead's id.
    const existing = await tx.query<{ site_id: string; lead_id: string; id: string }>(
      `select l.site_id, l.lead_id, l.id::text as id
         from ingest.leads l
         join json_to_recordset($1::json) as ${recordOf(LEADS, ["site_id", "lead_id"])}
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
