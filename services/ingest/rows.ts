/**
 * What the writer stores: rows prepared (validated, normalised, enriched) by
 * prepare.ts, typed from the table descriptions in tables.ts.
 */
import {
  type AttributionColumn,
  EVENTS,
  LEADS,
  PAGE_VIEWS,
  type RowOf,
  SESSIONS,
} from "./tables.ts";

/** Where a visit came from; a session keeps that of its first page view. */
export type Attribution = Pick<
  RowOf<typeof SESSIONS.columns>,
  AttributionColumn | "click_ids"
>;

export const NO_ATTRIBUTION: Attribution = {
  channel: null,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  utm_term: null,
  utm_content: null,
  ad_link: null,
  click_ids: {},
};

/**
 * A page view as prepared: its own attribution (from its URL and referrer)
 * in one member; the writer stores the session's, and whether the visitor is
 * new.
 */
export type PageViewRow =
  & Omit<RowOf<typeof PAGE_VIEWS.columns>, keyof Attribution | "new_visitor" | "page">
  & { attribution: Attribution };

/** An event as prepared; the writer adds its session's attribution. */
export type EventRow = Omit<RowOf<typeof EVENTS.columns>, AttributionColumn | "page">;

/** A lead as prepared; the writer adds its session's attribution. */
export type LeadRow = Omit<RowOf<typeof LEADS.columns>, AttributionColumn>;

/**
 * What the writer stores. A row brought in by `history import` keeps what
 * its record says: a page view its own attribution and whether its visitor
 * was new (`given`), an event or a lead its attribution, instead of its
 * session's.
 */
export type WriteItem =
  | { kind: "view"; row: PageViewRow; given?: { newVisitor: boolean | null } }
  | { kind: "event"; row: EventRow; attribution?: Attribution }
  | { kind: "lead"; row: LeadRow; attribution?: Attribution };

export interface WriteResult {
  duplicate: boolean;
  /** The lead's id (leads only). */
  id?: string;
}
