/** The site manifest (docs/operations.md) after validation, with every default filled in. */
import type { BlockType, BlogOrder, ParamType, WebhookType } from "../formats.ts";
import type { ShieldsDef } from "../shields.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type LanguageMap = Record<string, string>;

export interface SiteDef {
  id: string;
  name: string;
  /** An IANA zone, or null while the owner has not chosen one. */
  timeZone: string | null;
  /** Active languages in CRM order: the order of every language map in responses. */
  languages: string[];
  /** Host names accepted as a page's Origin (lowercase, as written). */
  domains: string[];
  /** Origins (`https://host[:port]`) that may frame the site's shared page; none when absent. */
  embedOrigins: string[];
  /**
   * Language fallback chains (`{"de-AT": "de", "de": "en"}`): each key and
   * value an active language, no cycle; empty when absent. Used by content
   * requests with fallback=true.
   */
  fallbacks: Record<string, string>;
}

export interface FieldDef {
  marker: string;
  type: BlockType;
  name?: string;
  multilang?: boolean;
  /** Inner fields of an object or array field. */
  fields?: FieldDef[];
}

export interface BlockDef {
  marker: string;
  name: string;
  type: BlockType;
  multilang: boolean;
  /** Field definitions of object and array blocks; never returned by the API. */
  fields?: FieldDef[];
  content: Json;
}

export interface SectionDef {
  marker: string;
  show: boolean;
  blocks: BlockDef[];
}

export interface PageDef {
  marker: string;
  href: string;
  sections: SectionDef[];
}

export interface BlogSettings {
  pageSize: number;
  order: BlogOrder;
  scheduling: boolean;
}

export interface PostDef {
  slug: string;
  status: "draft" | "published";
  /** ISO 8601 (normalised to UTC with milliseconds), or null. */
  publishedAt: string | null;
  createdAt: string | null;
  author: string | null;
  title: LanguageMap;
  /** One cover for every language, a cover per language, or none. */
  image: string | LanguageMap | null;
  body: LanguageMap;
}

export interface EventParamDef {
  key: string;
  type: ParamType;
}

export interface EventTypeDef {
  name: string;
  title: string;
  description: string;
  status: "active" | "archived";
  params: EventParamDef[];
  bringsRevenue: boolean;
  currency: string | null;
}

export interface WebhookDef {
  /** An https URL (http only while WEBHOOK_ALLOW_INSECURE=1), as written. */
  url: string;
  /** The message types it is sent, in the manifest's order, no repeats. */
  events: WebhookType[];
  /** `whsec_` and base64: never logged, exported or traced. */
  secret: string;
}

export interface EmailReportDef {
  /** One email address. */
  to: string;
  every: "week" | "month";
}

export interface TrafficAlertDef {
  to: string;
  kind: "spike" | "drop";
  /** Visitors: a spike when the last 30 minutes reach it, a drop when 12 hours stay below it. */
  threshold: number;
}

/** Email reports and traffic alerts; each list replaces the site's. */
export interface NotificationsDef {
  emailReports: EmailReportDef[];
  trafficAlerts: TrafficAlertDef[];
}

export interface Manifest {
  site: SiteDef;
  /** Site keys, or their exported hashes ("sha256:<hex>"). */
  siteKeys: string[];
  secretKeys: string[];
  /** Report keys (or their hashes); reportKeys is optional in the file. */
  reportKeys: string[];
  /** Preview keys (or their hashes); previewKeys is optional in the file. */
  previewKeys: string[];
  blog: BlogSettings;
  pages: PageDef[];
  /** Sections that belong to no page. */
  sections: SectionDef[];
  posts: PostDef[];
  eventTypes: EventTypeDef[];
  /** Where the site's messages go; the list replaces the site's webhooks. */
  webhooks: WebhookDef[];
  /** Email reports and traffic alerts; absent in the file: none. */
  notifications: NotificationsDef;
  /** What ingest drops; undefined when the manifest has none (the site's stay as they are). */
  shields?: ShieldsDef;
  /** Named filter sets, upserted by name (others are left as they are). */
  segments: SegmentDef[];
}

/** A segment: a name and its reports filters, as the query takes them. */
export interface SegmentDef {
  name: string;
  filters: [string, string, string[]][];
}
