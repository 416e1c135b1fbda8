/**
 * Validates a site manifest and fills in defaults. The first fault throws a
 * ManifestError naming its JSON path, so a faulty manifest is refused whole
 * before anything is stored. Unknown fields are ignored.
 */
import {
  BLOCK_TYPES,
  type BlockType,
  BLOG_ORDERS,
  type BlogOrder,
  CURRENCY,
  EMAIL_ADDRESS,
  EVENT_NAME,
  HOST_NAME,
  ianaTimeZone,
  LANGUAGE_CODE,
  LIMITS,
  MARKER,
  PARAM_KEY,
  PARAM_TYPES,
  type ParamType,
  SITE_ID,
  SLUG,
  WEBHOOK_TYPES,
  type WebhookType,
} from "../formats.ts";
import { secretKeyBytes } from "../webhooks/signature.ts";
import { isStorableUrl } from "../url_scheme.ts";
import { isJsonObject, type JsonObject } from "../json.ts";
import { KEY_HASH, PREVIEW_KEY, REPORT_KEY, SECRET_KEY, SITE_KEY } from "../keys.ts";
import { segmentsMember, shieldsMember } from "./analytics_members.ts";
import type {
  BlockDef,
  BlogSettings,
  EmailReportDef,
  EventTypeDef,
  FieldDef,
  Json,
  LanguageMap,
  Manifest,
  NotificationsDef,
  PageDef,
  PostDef,
  SectionDef,
  SiteDef,
  TrafficAlertDef,
  WebhookDef,
} from "./types.ts";

export class ManifestError extends Error {
  override name = "ManifestError";
  constructor(readonly path: string, readonly problem: string) {
    super(`${path}: ${problem}`);
  }
}

function fail(path: string, problem: string): never {
  throw new ManifestError(path, problem);
}

function object(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) fail(path, "must be an object");
  return value;
}

function optionalObject(value: unknown, path: string): JsonObject {
  return value === undefined ? {} : object(value, path);
}

function array(value: unknown, path: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(path, "must be an array");
  return value;
}

function string(value: unknown, path: string, fallback?: string): string {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== "string") fail(path, "must be a string");
  return value;
}

function nullableString(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  return string(value, path);
}

function boolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") fail(path, "must be true or false");
  return value;
}

/** A text format: the pattern and how a refusal names it. */
interface Format {
  pattern: RegExp;
  what: string;
}

function matching(value: unknown, path: string, { pattern, what }: Format): string {
  const s = string(value, path);
  if (!pattern.test(s)) fail(path, `must be ${what}`);
  return s;
}

function oneOf<T extends string>(
  value: unknown,
  path: string,
  { allowed, fallback }: { allowed: readonly T[]; fallback?: T },
): T {
  if (value === undefined && fallback !== undefined) return fallback;
  const s = string(value, path);
  if (!(allowed as readonly string[]).includes(s)) {
    fail(path, `must be one of ${allowed.join(", ")}`);
  }
  return s as T;
}

/** Remembers keys; refuses one seen before with the path of its repetition. */
function firstSeen(
  seen: Set<string>,
  { key, path, what }: { key: string; path: string; what: string },
) {
  if (seen.has(key)) fail(path, `duplicate ${what} "${key}"`);
  seen.add(key);
}

function unique(values: string[], path: (i: number) => string, what: string) {
  const seen = new Set<string>();
  values.forEach((v, i) => firstSeen(seen, { key: v, path: path(i), what }));
}

const ISO_DATE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function isoDate(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  const s = string(value, path);
  const ms = Date.parse(s);
  if (!ISO_DATE.test(s) || Number.isNaN(ms)) fail(path, "must be an ISO 8601 date");
  return new Date(ms).toISOString();
}

function languageMap(value: unknown, path: string): LanguageMap {
  if (value === undefined || value === null) return {};
  const map = object(value, path);
  const out: LanguageMap = {};
  for (const [code, text] of Object.entries(map)) {
    if (!LANGUAGE_CODE.test(code)) fail(`${path}.${code}`, "is not a language code");
    if (text === null) continue; // no saved value: the language is simply absent
    out[code] = string(text, `${path}.${code}`);
  }
  return out;
}

const URL_RULE = "must be an http or https URL or a relative path";

/** A URL websites will put into links and images: http, https or a path, never javascript:. */
function checkUrl(value: unknown, path: string): void {
  if (typeof value === "string" && !isStorableUrl(value)) fail(path, URL_RULE);
}

/** A language map of URLs, each checked. */
function urlMap(value: unknown, path: string): LanguageMap {
  const map = languageMap(value, path);
  for (const [code, url] of Object.entries(map)) checkUrl(url, `${path}.${code}`);
  return map;
}

function site(value: unknown): SiteDef {
  const s = object(value, "$.site");
  // Checked in the manifest's field order, so the first fault reported is the first in the file.
  const id = matching(s.id, "$.site.id", {
    pattern: SITE_ID,
    what: "lowercase letters, digits and hyphens, 2 to 63",
  });
  const name = string(s.name, "$.site.name", id);
  // Absent or null while the owner has not chosen one: reports then use the zone a query names.
  const timeZone = nullableString(s.timeZone, "$.site.timeZone");
  if (timeZone !== null && ianaTimeZone(timeZone) === undefined) {
    fail("$.site.timeZone", "must be an IANA time zone");
  }
  const languages = array(s.languages, "$.site.languages").map((l, i) =>
    matching(l, `$.site.languages[${i}]`, {
      pattern: LANGUAGE_CODE,
      what: "a language code such as en or pt-BR",
    })
  );
  if (languages.length === 0) fail("$.site.languages", "must list at least one language");
  unique(languages, (i) => `$.site.languages[${i}]`, "language");
  const domains = array(s.domains, "$.site.domains").map((d, i) => {
    const host = string(d, `$.site.domains[${i}]`).toLowerCase();
    if (!HOST_NAME.test(host)) {
      fail(`$.site.domains[${i}]`, "must be a host name without scheme or port");
    }
    return host;
  });
  unique(domains.map((d) => d.replace(/^www\./, "")), (i) => `$.site.domains[${i}]`, "domain");
  const embedOrigins = s.embedOrigins === undefined || s.embedOrigins === null
    ? []
    : array(s.embedOrigins, "$.site.embedOrigins").map((o, i) =>
      embedOrigin(o, `$.site.embedOrigins[${i}]`)
    );
  if (embedOrigins.length > MAX_EMBED_ORIGINS) {
    fail("$.site.embedOrigins", `must list at most ${MAX_EMBED_ORIGINS} origins`);
  }
  unique(embedOrigins, (i) => `$.site.embedOrigins[${i}]`, "origin");
  const fallbacks = languageFallbacks(s.fallbacks, languages);
  return { id, name, timeZone, languages, domains, embedOrigins, fallbacks };
}

/** site.fallbacks: active languages to active languages, no chain longer than the languages, no cycle. */
function languageFallbacks(value: unknown, languages: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  const map = object(value, "$.site.fallbacks");
  const out: Record<string, string> = {};
  for (const [from, to] of Object.entries(map)) {
    const path = `$.site.fallbacks.${from}`;
    if (!languages.includes(from)) fail(path, "must be keyed by an active language");
    if (typeof to !== "string" || !languages.includes(to)) {
      fail(path, "must be an active language");
    }
    if (to === from) fail(path, "must not fall back to itself");
    out[from] = to;
  }
  for (const start of Object.keys(out)) {
    const seen = new Set([start]);
    for (let lang = out[start]; lang !== undefined; lang = out[lang]) {
      if (seen.has(lang)) fail(`$.site.fallbacks.${start}`, "makes a cycle");
      seen.add(lang);
      if (seen.size > languages.length) {
        fail(`$.site.fallbacks.${start}`, "makes a chain longer than the languages");
      }
    }
  }
  return out;
}

const MAX_EMBED_ORIGINS = 10;

/** An https origin (scheme, host, optional port; no path), lowercased as browsers send it. */
function embedOrigin(value: unknown, path: string): string {
  const text = string(value, path);
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const bare = text.replace(/\/$/, "").toLowerCase();
  if (!url || url.protocol !== "https:" || url.origin !== bare || url.username || url.password) {
    fail(path, "must be an https origin such as https://intranet.example (no path)");
  }
  return url.origin;
}

function keys(
  value: unknown,
  path: string,
  { format, what }: { format: RegExp; what: string },
): string[] {
  const list = array(value, path).map((k, i) =>
    matching(k, `${path}[${i}]`, {
      pattern: new RegExp(`${format.source}|${KEY_HASH.source}`),
      what,
    })
  );
  return [...new Set(list)];
}

function blog(value: unknown): BlogSettings {
  const b = optionalObject(value, "$.blog");
  const pageSize = b.pageSize ?? LIMITS.defaultBlogPageSize;
  if (
    !Number.isInteger(pageSize) || (pageSize as number) < 1 ||
    (pageSize as number) > LIMITS.maxBlogWindow
  ) {
    fail("$.blog.pageSize", `must be an integer from 1 to ${LIMITS.maxBlogWindow}`);
  }
  return {
    pageSize: pageSize as number,
    order: oneOf<BlogOrder>(b.order, "$.blog.order", {
      allowed: BLOG_ORDERS,
      fallback: "publishedAt:desc",
    }),
    scheduling: boolean(b.scheduling, "$.blog.scheduling", true),
  };
}

/** Checks a value against its type; returns it with absent languages dropped. */
/** What a block's or field's content is checked against: its definition. */
interface ContentShape {
  type: BlockType;
  multilang?: boolean;
  fields?: FieldDef[];
}

function blockValue(
  { type, multilang = false, fields }: ContentShape,
  value: unknown,
  path: string,
): Json {
  if (value === undefined || value === null) return null;
  switch (type) {
    case "text":
    case "html":
      return languageMap(value, path);
    case "image":
    case "video": {
      if (multilang) return urlMap(value, path);
      const media = object(value, path);
      if (media.file !== undefined && media.file !== null && typeof media.file !== "string") {
        fail(`${path}.file`, "must be a URL string");
      }
      checkUrl(media.file, `${path}.file`);
      return media as Json;
    }
    case "link": {
      const link = object(value, path);
      for (const key of ["url", "target"]) {
        if (link[key] !== undefined && link[key] !== null && typeof link[key] !== "string") {
          fail(`${path}.${key}`, "must be a string");
        }
      }
      checkUrl(link.url, `${path}.url`);
      const out: JsonObject = { ...link };
      if (link.title !== undefined) out.title = languageMap(link.title, `${path}.title`);
      return out as Json;
    }
    case "object":
      return objectValue(fields ?? [], value, path);
    case "array":
      if (!Array.isArray(value)) fail(path, "must be an array");
      return value.map((item, i) => objectValue(fields ?? [], item, `${path}[${i}]`));
    default:
      // number, color, date, boolean, date_range: the raw stored value.
      return value as Json;
  }
}

function objectValue(fields: FieldDef[], value: unknown, path: string): Json {
  if (value === null) return null;
  const obj = object(value, path);
  const out: Record<string, Json> = {};
  for (const [key, inner] of Object.entries(obj)) {
    const field = fields.find((f) => f.marker === key);
    out[key] = field ? blockValue(field, inner, `${path}.${key}`) : inner as Json; // undeclared field: kept and returned as it is
  }
  return out;
}

function fieldDefs(value: unknown, path: string): FieldDef[] {
  const list = array(value, path).map((f, i) => {
    const p = `${path}[${i}]`;
    const o = object(f, p);
    const def: FieldDef = {
      marker: matching(o.marker, `${p}.marker`, {
        pattern: MARKER,
        what: "2 to 40 of A-Z, a-z, 0-9 and _",
      }),
      type: oneOf<BlockType>(o.type, `${p}.type`, { allowed: BLOCK_TYPES }),
    };
    if (o.name !== undefined) def.name = string(o.name, `${p}.name`);
    if (o.multilang !== undefined) def.multilang = boolean(o.multilang, `${p}.multilang`, false);
    if (o.fields !== undefined) def.fields = fieldDefs(o.fields, `${p}.fields`);
    return def;
  });
  unique(list.map((f) => f.marker), (i) => `${path}[${i}].marker`, "field marker");
  return list;
}

function block(value: unknown, path: string): BlockDef {
  const b = object(value, path);
  const marker = matching(b.marker, `${path}.marker`, {
    pattern: MARKER,
    what: "2 to 40 of A-Z, a-z, 0-9 and _",
  });
  const name = string(b.name, `${path}.name`, marker);
  const type = oneOf<BlockType>(b.type, `${path}.type`, { allowed: BLOCK_TYPES });
  const multilang = boolean(b.multilang, `${path}.multilang`, false);
  const fields = type === "object" || type === "array" || b.fields !== undefined
    ? fieldDefs(b.fields, `${path}.fields`)
    : undefined;
  const content = blockValue({ type, multilang, fields }, b.content, `${path}.content`);
  return fields
    ? { marker, name, type, multilang, fields, content }
    : { marker, name, type, multilang, content };
}

function section(value: unknown, path: string): SectionDef {
  const s = object(value, path);
  const marker = matching(s.marker, `${path}.marker`, {
    pattern: MARKER,
    what: "2 to 40 of A-Z, a-z, 0-9 and _",
  });
  const show = boolean(s.show, `${path}.show`, true);
  const blocks = array(s.blocks, `${path}.blocks`).map((b, i) => block(b, `${path}.blocks[${i}]`));
  unique(
    blocks.map((b) => b.marker),
    (i) => `${path}.blocks[${i}].marker`,
    "block marker in this section",
  );
  return { marker, show, blocks };
}

function page(value: unknown, path: string): PageDef {
  const p = object(value, path);
  const marker = matching(p.marker, `${path}.marker`, {
    pattern: MARKER,
    what: "2 to 40 of A-Z, a-z, 0-9 and _",
  });
  const href = string(p.href, `${path}.href`, "");
  const sections = array(p.sections, `${path}.sections`).map((s, i) =>
    section(s, `${path}.sections[${i}]`)
  );
  return { marker, href, sections };
}

function post(value: unknown, path: string): PostDef {
  const p = object(value, path);
  const slug = matching(p.slug, `${path}.slug`, {
    pattern: SLUG,
    what: "lowercase a-z, digits and hyphens, up to 120",
  });
  const status = oneOf(p.status, `${path}.status`, {
    allowed: ["draft", "published"] as const,
    fallback: "published",
  });
  const publishedAt = isoDate(p.publishedAt, `${path}.publishedAt`);
  const createdAt = isoDate(p.createdAt, `${path}.createdAt`);
  const author = nullableString(p.author, `${path}.author`);
  const title = languageMap(p.title, `${path}.title`);
  let image: PostDef["image"] = null;
  if (typeof p.image === "string") {
    checkUrl(p.image, `${path}.image`);
    image = p.image;
  } else if (p.image !== undefined && p.image !== null) image = urlMap(p.image, `${path}.image`);
  const body = languageMap(p.body, `${path}.body`);
  return { slug, status, publishedAt, createdAt, author, title, image, body };
}

function eventType(value: unknown, path: string): EventTypeDef {
  const e = object(value, path);
  const name = matching(e.name, `${path}.name`, {
    pattern: EVENT_NAME,
    what: "a Latin letter then letters, digits or _, up to 64",
  });
  const title = string(e.title, `${path}.title`, name);
  const description = string(e.description, `${path}.description`, "");
  const status = oneOf(e.status, `${path}.status`, {
    allowed: ["active", "archived"] as const,
    fallback: "active",
  });
  const params = array(e.params, `${path}.params`).map((p, i) => {
    const pp = `${path}.params[${i}]`;
    const o = object(p, pp);
    return {
      key: matching(o.key, `${pp}.key`, {
        pattern: PARAM_KEY,
        what: "a Latin letter then letters, digits or _, up to 40",
      }),
      type: oneOf<ParamType>(o.type, `${pp}.type`, { allowed: PARAM_TYPES }),
    };
  });
  if (params.length > LIMITS.maxParamsPerEvent) {
    fail(`${path}.params`, `must have at most ${LIMITS.maxParamsPerEvent} parameters`);
  }
  unique(params.map((p) => p.key), (i) => `${path}.params[${i}].key`, "parameter key");
  const bringsRevenue = boolean(e.bringsRevenue, `${path}.bringsRevenue`, false);
  const currency = e.currency === undefined || e.currency === null || e.currency === ""
    ? null
    : matching(e.currency, `${path}.currency`, {
      pattern: CURRENCY,
      what: "1 to 10 Latin letters or digits",
    });
  return { name, title, description, status, params, bringsRevenue, currency };
}

export interface ValidateOptions {
  /** WEBHOOK_ALLOW_INSECURE=1: webhook URLs may use http as well as https. */
  allowInsecureWebhooks?: boolean;
}

const MAX_WEBHOOK_URL = 2048;

function webhookUrl(value: unknown, path: string, options: ValidateOptions): string {
  const text = string(value, path);
  const insecure = options.allowInsecureWebhooks === true;
  const rule = insecure ? "must be an http or https URL" : "must be an https URL";
  if (text.length > MAX_WEBHOOK_URL) fail(path, `must be at most ${MAX_WEBHOOK_URL} characters`);
  const url = URL.parse(text);
  if (!url || url.hostname === "") fail(path, rule);
  if (url.protocol === "http:" && !insecure) {
    fail(path, "must be an https URL (http only while WEBHOOK_ALLOW_INSECURE=1)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") fail(path, rule);
  // The URL is printed by export-site and webhooks log: a password in it would be too.
  if (url.username !== "" || url.password !== "") {
    fail(path, "must not carry a user name or password");
  }
  return text;
}

function webhook(value: unknown, path: string, options: ValidateOptions): WebhookDef {
  const w = object(value, path);
  const url = webhookUrl(w.url, `${path}.url`, options);
  if (!Array.isArray(w.events) || w.events.length === 0) {
    fail(`${path}.events`, "must be a non-empty array");
  }
  const events = w.events.map((e, i) =>
    oneOf<WebhookType>(e, `${path}.events[${i}]`, { allowed: WEBHOOK_TYPES })
  );
  unique(events, (i) => `${path}.events[${i}]`, "webhook type");
  const secret = string(w.secret, `${path}.secret`);
  if (!secretKeyBytes(secret)) {
    // The problem never quotes the value: it is a secret.
    fail(`${path}.secret`, "must be whsec_ followed by the base64 of 24 to 64 random bytes");
  }
  return { url, events, secret };
}

function webhooks(value: unknown, options: ValidateOptions): WebhookDef[] {
  const items = array(value, "$.webhooks");
  if (items.length > LIMITS.maxWebhooks) {
    fail("$.webhooks", `a site has at most ${LIMITS.maxWebhooks} webhooks`);
  }
  const list = items.map((w, i) => webhook(w, `$.webhooks[${i}]`, options));
  unique(list.map((w) => w.url), (i) => `$.webhooks[${i}].url`, "webhook URL");
  return list;
}

function emailAddress(value: unknown, path: string): string {
  return matching(value, path, { pattern: EMAIL_ADDRESS, what: "one email address" });
}

/** A list of at most LIMITS.maxNotifications items, each read by `item`, none repeated. */
function notificationList<T>(
  value: unknown,
  path: string,
  item: (value: unknown, path: string) => T,
): T[] {
  const items = array(value, path);
  if (items.length > LIMITS.maxNotifications) {
    fail(path, `must hold at most ${LIMITS.maxNotifications} items`);
  }
  const list = items.map((v, i) => item(v, `${path}[${i}]`));
  unique(list.map((v) => JSON.stringify(v)), (i) => `${path}[${i}]`, "notification");
  return list;
}

function notifications(value: unknown): NotificationsDef {
  const n = optionalObject(value, "$.notifications");
  const emailReports = notificationList(n.emailReports, "$.notifications.emailReports", (v, p) => {
    const r = object(v, p);
    return {
      to: emailAddress(r.to, `${p}.to`),
      every: oneOf(r.every, `${p}.every`, { allowed: ["week", "month"] as const }),
    } satisfies EmailReportDef;
  });
  const trafficAlerts = notificationList(
    n.trafficAlerts,
    "$.notifications.trafficAlerts",
    (v, p) => {
      const a = object(v, p);
      const to = emailAddress(a.to, `${p}.to`);
      const kind = oneOf(a.kind, `${p}.kind`, { allowed: ["spike", "drop"] as const });
      const threshold = a.threshold;
      if (
        typeof threshold !== "number" || !Number.isSafeInteger(threshold) || threshold < 1
      ) {
        fail(`${p}.threshold`, "must be a positive integer");
      }
      return { to, kind, threshold } satisfies TrafficAlertDef;
    },
  );
  return { emailReports, trafficAlerts };
}

export function validateManifest(input: unknown, options: ValidateOptions = {}): Manifest {
  const root = object(input, "$");
  const siteDef = site(root.site);
  const siteKeys = keys(root.siteKeys, "$.siteKeys", {
    format: SITE_KEY,
    what: "pk_ followed by 32 lowercase hex",
  });
  const secretKeys = keys(root.secretKeys, "$.secretKeys", {
    format: SECRET_KEY,
    what: "sk_ followed by 48 lowercase hex",
  });
  if (secretKeys.length > LIMITS.maxSecretKeysActive) {
    fail("$.secretKeys", `a site has at most ${LIMITS.maxSecretKeysActive} active secret keys`);
  }
  secretKeys.forEach((k, i) => {
    if (siteKeys.includes(k)) fail(`$.secretKeys[${i}]`, "is also listed as a site key");
  });
  const reportKeys = keys(root.reportKeys, "$.reportKeys", {
    format: REPORT_KEY,
    what: "rk_ followed by 48 lowercase hex",
  });
  reportKeys.forEach((k, i) => {
    if (siteKeys.includes(k)) fail(`$.reportKeys[${i}]`, "is also listed as a site key");
    if (secretKeys.includes(k)) fail(`$.reportKeys[${i}]`, "is also listed as a secret key");
  });
  const previewKeys = keys(root.previewKeys, "$.previewKeys", {
    format: PREVIEW_KEY,
    what: "pv_ followed by 32 lowercase hex",
  });
  previewKeys.forEach((k, i) => {
    if (siteKeys.includes(k)) fail(`$.previewKeys[${i}]`, "is also listed as a site key");
  });
  const blogSettings = blog(root.blog);
  // Repeated keys are refused as soon as their item is read, so a duplicate
  // is reported before faults further down the file.
  const seenPages = new Set<string>();
  const seenSections = new Set<string>();
  const pages = array(root.pages, "$.pages").map((value, i) => {
    const p = page(value, `$.pages[${i}]`);
    firstSeen(seenPages, { key: p.marker, path: `$.pages[${i}].marker`, what: "page marker" });
    p.sections.forEach((s, j) =>
      firstSeen(seenSections, {
        key: s.marker,
        path: `$.pages[${i}].sections[${j}].marker`,
        what: "section marker",
      })
    );
    return p;
  });
  const sections = array(root.sections, "$.sections").map((value, i) => {
    const s = section(value, `$.sections[${i}]`);
    firstSeen(seenSections, {
      key: s.marker,
      path: `$.sections[${i}].marker`,
      what: "section marker",
    });
    return s;
  });
  const seenSlugs = new Set<string>();
  const posts = array(root.posts, "$.posts").map((value, i) => {
    const p = post(value, `$.posts[${i}]`);
    firstSeen(seenSlugs, { key: p.slug, path: `$.posts[${i}].slug`, what: "post slug" });
    return p;
  });
  const seenNames = new Set<string>();
  const eventTypes = array(root.eventTypes, "$.eventTypes").map((value, i) => {
    const e = eventType(value, `$.eventTypes[${i}]`);
    firstSeen(seenNames, { key: e.name, path: `$.eventTypes[${i}].name`, what: "event name" });
    return e;
  });
  if (eventTypes.filter((e) => e.status === "active").length > LIMITS.maxEventTypesActive) {
    fail("$.eventTypes", `a site has at most ${LIMITS.maxEventTypesActive} active event types`);
  }
  const hooks = webhooks(root.webhooks, options);
  const shields = shieldsMember(root.shields);
  const segments = segmentsMember(root.segments);
  const notified = notifications(root.notifications);
  return {
    site: siteDef,
    siteKeys,
    secretKeys,
    reportKeys,
    previewKeys,
    blog: blogSettings,
    pages,
    sections,
    posts,
    eventTypes,
    webhooks: hooks,
    ...(shields ? { shields } : {}),
    segments,
    notifications: notified,
  };
}

/** Parses manifest JSON text and validates it. */
export function parseManifest(text: string, options: ValidateOptions = {}): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ManifestError("$", `is not valid JSON (${(error as Error).message})`);
  }
  return validateManifest(parsed, options);
}
