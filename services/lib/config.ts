/**
 * Configuration: read once at start-up from the environment, validated, and
 * passed down. Nothing else in the code base reads `Deno.env`.
 */

import { parseReferrerBlocklist } from "./shields.ts";

/** HTTP_BODY_TIMEOUT_MS unless set: the longest a request body may take to arrive. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/** RESPONSE_CACHE_MAX_BYTES unless set: the content answers the gateway keeps in memory. */
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

export type RunMode = "start" | "service" | "admin";

export interface RateLimits {
  /** Content API requests per client IP per minute. */
  contentPerIp: number;
  /** Content API requests per site key per minute. */
  contentPerKey: number;
  /** Invalid-key content requests per IP per minute before the IP is refused. */
  invalidKeyPerIp: number;
  /** Marketing requests (page views, events, leads) per IP per minute. */
  marketingPerIp: number;
  /** Marketing requests per site per minute. */
  marketingPerSite: number;
  /** Reports queries per report key per minute. */
  statsPerKey: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  /**
   * DATABASE_READ_URL: a streaming replica of databaseUrl that reports,
   * funnels, exports, segment and share-link reads run on; unset: the primary.
   */
  databaseReadUrl?: string;
  /** The storage connections of a process: its write path, and the reports' own. */
  pools: PoolSettings;
  redisUrl?: string;
  /** Prefix of every Redis key and channel, so installations can share one Redis. */
  redisKeyPrefix: string;
  dataDir: string;
  authUrl: string;
  contentUrl: string;
  ingestUrl: string;
  grpcPort: number;
  /** The bearer token every admin call must carry (ADMIN_TOKEN). */
  adminToken?: string;
  /**
   * A second accepted admin token (ADMIN_TOKEN_NEXT), so the token can be
   * rotated over two rollouts with no failed call: first add it here, then
   * make it ADMIN_TOKEN.
   */
  adminTokenNext?: string;
  trustProxy: number;
  keyCacheTtlS: number;
  /** Page views and events older than this many days are deleted by the retention job. */
  retentionDays: number;
  /** True when RETENTION_DAYS was set, so the admin command line passes it to the service. */
  retentionDaysSet: boolean;
  /**
   * The MMDB file ingest-service reads locations from: undefined for the
   * database bundled with the dependencies, "off" for no lookups.
   */
  geoipDb?: string;
  /**
   * The host names of REFERRER_BLOCKLIST's file (read at start): page views
   * and events whose referrer is one of them, or a subdomain, are dropped.
   */
  referrerBlocklist: string[];
  /** The gateway's batching of marketing requests into ingest calls. */
  ingestBatch: IngestBatchSettings;
  /** Seconds a CDN may keep a content response (s-maxage). */
  contentCdnMaxAgeS: number;
  limits: RateLimits;
  /** What the gateway holds per request and at once. */
  http: HttpLimits;
  /** Bytes of rendered content answers the gateway keeps in memory. */
  responseCacheMaxBytes: number;
  logLevel: LogLevel;
  /**
   * work_mem in MB for each reports statement (STATS_WORK_MEM_MB, SET LOCAL
   * in its transaction); 0 leaves the server's setting.
   */
  statsWorkMemMb: number;
  /** Outbound webhooks: what their addresses may be. */
  webhooks: WebhookSettings;
  /**
   * METRICS_PER_SITE=1: ingest's item counter carries the site id (a series
   * per site, per pod; off by default, docs/observability.md).
   */
  metricsPerSite: boolean;
  /**
   * TRACE_TRUST_PARENT (default 1): the gateway honours an incoming
   * traceparent's sampled flag; 0 keeps its trace id but samples at the
   * gateway's own ratio, so no caller can force a trace to be kept.
   */
  traceTrustParent: boolean;
  /**
   * PUBLIC_URL: the gateway's public base URL (no trailing slash), used in
   * share links and mails; unset: the gateway's own address (publicUrlOf).
   */
  publicUrl?: string;
  /** Email reports and traffic alerts (SMTP_URL, MAIL_FROM). */
  mail: MailSettings;
}

export interface MailSettings {
  /**
   * SMTP_URL: `smtp://[user:password@]host:port` (STARTTLS when the server
   * offers it) or `smtps://...`; undefined: no mail is sent.
   */
  smtpUrl?: string;
  /** MAIL_FROM: the sender, `reports@` and the public URL's host name unless set. */
  from: string;
}

export interface PoolSettings {
  /** DATABASE_POOL_SIZE: connections a process opens for its write path. */
  writeSize: number;
  /**
   * REPORT_POOL_SIZE: connections kept apart for reports, funnels, exports,
   * segment and share-link reads (on databaseReadUrl when set), so the write
   * path never waits for one of them.
   */
  reportSize: number;
  /**
   * REPORT_TIMEOUT_MS: the longest a report, funnel or export page may run;
   * past it its statement is cancelled in Postgres and the caller told
   * `timeout`.
   */
  reportTimeoutMs: number;
}

export interface WebhookSettings {
  /**
   * WEBHOOK_ALLOW_PRIVATE=1: deliveries may reach loopback, private,
   * link-local and other non-public addresses (refused otherwise, checked on
   * the resolved address of every attempt).
   */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOW_INSECURE=1: a manifest may name `http` webhook URLs. */
  allowInsecure: boolean;
}

/**
 * Bounds on what one request may make the gateway hold. Each is below the
 * HTTP server's own (which answers a bare 400 without a JSON body), so a
 * client sees the documented JSON error.
 */
export interface HttpLimits {
  /** Most request header fields. */
  maxHeaders: number;
  /** Most bytes of all header names and values together. */
  maxHeaderBytes: number;
  /** Longest path and query, in bytes. */
  maxUrlBytes: number;
  /** Longest time to receive a request body, in ms. */
  bodyTimeoutMs: number;
  /** Requests handled at once by one gateway; over it 503 overloaded. */
  maxInFlight: number;
  /** Requests handled at once on one connection (HTTP/2 streams); over it 503 overloaded. */
  maxInFlightPerConnection: number;
}

export interface IngestBatchSettings {
  /** Longest wait for more requests before a batch is sent, in ms. */
  maxWaitMs: number;
  /** Most requests in one batch. */
  maxItems: number;
}

export type LogLevel = "debug" | "info" | "warn" | "error";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

/**
 * The settings that hold secrets. Each can also be given as NAME_FILE, the
 * path of a file holding the value (a mounted Kubernetes Secret, say), so the
 * value need not sit in the process's environment.
 */
export const SECRET_SETTINGS = [
  "DATABASE_URL",
  "DATABASE_READ_URL",
  "REDIS_URL",
  "ADMIN_TOKEN",
  "ADMIN_TOKEN_NEXT",
  "SMTP_URL",
] as const;

/** Reads a secret's file; the default reads it from disk at start. */
export type SecretFileReader = (path: string) => string;

const readFromDisk: SecretFileReader = (path) => Deno.readTextFileSync(path);

/**
 * The environment with every secret given as NAME_FILE read into NAME. A
 * file's one trailing line break goes (files written by `echo` or an editor
 * end with one); an empty or unreadable file, or NAME and NAME_FILE both set,
 * is a ConfigError naming the setting.
 */
export function withSecretFiles(env: Env, readFile: SecretFileReader = readFromDisk): Env {
  const resolved: Env = { ...env };
  for (const name of SECRET_SETTINGS) {
    const path = env[`${name}_FILE`];
    if (path === undefined || path === "") continue;
    if (env[name] !== undefined && env[name] !== "") {
      throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
    }
    let text: string;
    try {
      text = readFile(path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ConfigError(`${name}_FILE: cannot read ${path}: ${reason}`);
    }
    const value = text.replace(/\r?\n$/, "");
    if (value === "") throw new ConfigError(`${name}_FILE: ${path} is empty`);
    resolved[name] = value;
  }
  return resolved;
}

interface IntegerSetting {
  fallback: number;
  min: number;
  max: number;
}

function integer(env: Env, name: string, { fallback, min, max }: IntegerSetting): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  }
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/**
 * One of the documented values, spelt exactly (no case folding, no spaces);
 * unset or empty takes the fallback, anything else a fault naming the setting.
 */
function oneOf<T extends string>(
  env: Env,
  name: string,
  { values, fallback }: { values: readonly T[]; fallback: T },
): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function url(
  env: Env,
  name: string,
  { fallback, protocols }: { fallback: string; protocols: string[] },
): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL: "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(" or ")}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, "");
}

function optionalUrl(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  return url(env, name, { fallback: raw, protocols });
}

/** DATABASE_READ_URL: a replica of DATABASE_URL, so meaningless without it. */
function readUrl(env: Env): string | undefined {
  const read = optionalUrl(env, "DATABASE_READ_URL", ["postgres:", "postgresql:"]);
  if (read && !env.DATABASE_URL) {
    throw new ConfigError("DATABASE_READ_URL needs DATABASE_URL (the primary it replicates)");
  }
  return read;
}

/** SMTP_URL: an smtp or smtps URL naming a host; its password is never quoted in a fault. */
function smtpUrl(env: Env): string | undefined {
  const raw = env.SMTP_URL;
  if (raw === undefined || raw === "") return undefined;
  const parsed = URL.parse(raw);
  if (!parsed || (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:")) {
    throw new ConfigError("SMTP_URL must be smtp://[user:password@]host:port or smtps://...");
  }
  if (parsed.hostname === "") throw new ConfigError("SMTP_URL must name the mail server's host");
  return raw;
}

/** One address, bare or with a display name: `reports@example.com`, `Reports <r@example.com>`. */
const MAIL_ADDRESS = /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/** MAIL_FROM, else `reports@` and the host name of the public URL (no port). */
function mailFrom(env: Env, publicUrl: string): string {
  const raw = env.MAIL_FROM;
  if (raw === undefined || raw === "") {
    return `reports@${new URL(publicUrl).hostname.replace(/^\[|\]$/g, "")}`;
  }
  if (!MAIL_ADDRESS.test(raw.trim())) {
    throw new ConfigError(`MAIL_FROM must be an email address, got "${raw}"`);
  }
  return raw.trim();
}

/** A switch that only the exact value `1` turns on; unset or empty is off, anything else a fault. */
function one(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return false;
  if (raw !== "1") throw new ConfigError(`${name} must be 1 or unset, got "${raw}"`);
  return true;
}

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/**
 * The OpenTelemetry settings with a closed set of values that this system
 * documents (docs/observability.md). Deno's exporter reads them itself and
 * falls back without a word on a value it does not know, so a misspelt one
 * would silently export differently from what the operator asked for.
 */
const OTEL_CHOICES: Record<string, readonly string[]> = {
  OTEL_EXPORTER_OTLP_PROTOCOL: ["http/protobuf", "http/json"],
  OTEL_TRACES_SAMPLER: [
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
  ],
  OTEL_DENO_CONSOLE: ["capture", "replace", "ignore"],
  OTEL_DENO: ["true", "false"],
  OTEL_SDK_DISABLED: ["true", "false"],
};

function checkOtel(env: Env): void {
  for (const [name, values] of Object.entries(OTEL_CHOICES)) {
    oneOf(env, name, { values, fallback: "" });
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  if (arg !== undefined && arg !== "") {
    const ratio = /^\d+(\.\d+)?$/.test(arg) ? Number(arg) : NaN;
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${arg}"`);
    }
  }
}

/** REFERRER_BLOCKLIST: the host names of its file; an unreadable file or a bad line is refused. */
function referrerBlocklist(env: Env, readFile: SecretFileReader): string[] {
  const path = env.REFERRER_BLOCKLIST;
  if (!path) return [];
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new ConfigError(`REFERRER_BLOCKLIST: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseReferrerBlocklist(text);
  } catch (error) {
    throw new ConfigError(`REFERRER_BLOCKLIST: ${path}: ${(error as Error).message}`);
  }
}

/**
 * Reads and validates the whole configuration; throws ConfigError naming the
 * bad setting. Secrets given as NAME_FILE are read from their files here.
 */
export function loadConfig(
  given: Env,
  mode: RunMode,
  readFile: SecretFileReader = readFromDisk,
): Config {
  const env = withSecretFiles(given, readFile);
  const logLevel: LogLevel = oneOf(env, "LOG_LEVEL", { values: LOG_LEVELS, fallback: "info" });
  checkOtel(env);
  const adminToken = env.ADMIN_TOKEN || undefined;
  const adminTokenNext = env.ADMIN_TOKEN_NEXT || undefined;
  if (adminTokenNext && !adminToken) {
    throw new ConfigError("ADMIN_TOKEN_NEXT needs ADMIN_TOKEN: it is a second token beside it");
  }
  const port = integer(env, "PORT", { fallback: 8080, min: 0, max: 65535 });
  const host = env.HOST || (mode === "service" ? "0.0.0.0" : "127.0.0.1");
  const publicUrl = optionalUrl(env, "PUBLIC_URL", ["http:", "https:"]);
  return {
    port,
    host,
    databaseUrl: optionalUrl(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    databaseReadUrl: readUrl(env),
    pools: {
      writeSize: integer(env, "DATABASE_POOL_SIZE", { fallback: 10, min: 1, max: 1000 }),
      reportSize: integer(env, "REPORT_POOL_SIZE", { fallback: 4, min: 1, max: 1000 }),
      reportTimeoutMs: integer(env, "REPORT_TIMEOUT_MS", {
        fallback: 10_000,
        min: 100,
        max: 3_600_000,
      }),
    },
    redisUrl: optionalUrl(env, "REDIS_URL", ["redis:", "rediss:"]),
    redisKeyPrefix: env.REDIS_KEY_PREFIX || "crm:",
    dataDir: env.CRM_DATA_DIR || ".data",
    authUrl: url(env, "AUTH_URL", {
      fallback: "http://127.0.0.1:50051",
      protocols: ["http:", "https:"],
    }),
    contentUrl: url(env, "CONTENT_URL", {
      fallback: "http://127.0.0.1:50052",
      protocols: ["http:", "https:"],
    }),
    ingestUrl: url(env, "INGEST_URL", {
      fallback: "http://127.0.0.1:50053",
      protocols: ["http:", "https:"],
    }),
    grpcPort: integer(env, "GRPC_PORT", { fallback: 50051, min: 0, max: 65535 }),
    adminToken,
    adminTokenNext,
    trustProxy: integer(env, "TRUST_PROXY", { fallback: 0, min: 0, max: 32 }),
    keyCacheTtlS: integer(env, "KEY_CACHE_TTL_S", { fallback: 60, min: 0, max: 86400 }),
    // 0 is allowed and means "keep nothing": the next run deletes every page view and event.
    retentionDays: integer(env, "RETENTION_DAYS", { fallback: 395, min: 0, max: 36500 }),
    retentionDaysSet: (env.RETENTION_DAYS ?? "") !== "",
    geoipDb: env.GEOIP_DB || undefined,
    // Only the services drop by it; the admin command line never reads the file.
    referrerBlocklist: mode === "admin" ? [] : referrerBlocklist(env, readFile),
    ingestBatch: {
      // 1 ms, not 2: under load a batch fills well within 1 ms, and the shorter wait gave
      // 7% more durable events/s at 256 connections (docs/benchmarks.md, ingest).
      maxWaitMs: integer(env, "INGEST_BATCH_WAIT_MS", { fallback: 1, min: 0, max: 1000 }),
      maxItems: integer(env, "INGEST_BATCH_MAX_ITEMS", { fallback: 500, min: 1, max: 5000 }),
    },
    contentCdnMaxAgeS: integer(env, "CONTENT_CDN_MAX_AGE_S", { fallback: 30, min: 0, max: 86400 }),
    limits: {
      contentPerIp: integer(env, "RATE_LIMIT_CONTENT_PER_IP", { fallback: 300, min: 1, max: 1e9 }),
      contentPerKey: integer(env, "RATE_LIMIT_CONTENT_PER_KEY", {
        fallback: 600,
        min: 1,
        max: 1e9,
      }),
      invalidKeyPerIp: integer(env, "RATE_LIMIT_INVALID_KEY_PER_IP", {
        fallback: 20,
        min: 0,
        max: 1e9,
      }),
      marketingPerIp: integer(env, "RATE_LIMIT_MARKETING_PER_IP", {
        fallback: 120,
        min: 1,
        max: 1e9,
      }),
      marketingPerSite: integer(env, "RATE_LIMIT_MARKETING_PER_SITE", {
        fallback: 6000,
        min: 1,
        max: 1e9,
      }),
      statsPerKey: integer(env, "RATE_LIMIT_STATS_PER_KEY", { fallback: 600, min: 1, max: 1e9 }),
    },
    // The maxima stay under Deno's HTTP server's own bounds (128 header fields,
    // 64 KiB for the request line and headers together, measured on Deno 2.9),
    // over which it answers a bare 400 before the gateway sees the request.
    http: {
      maxHeaders: integer(env, "HTTP_MAX_HEADERS", { fallback: 100, min: 1, max: 120 }),
      maxHeaderBytes: integer(env, "HTTP_MAX_HEADER_BYTES", {
        fallback: 16384,
        min: 1024,
        max: 49152,
      }),
      maxUrlBytes: integer(env, "HTTP_MAX_URL_BYTES", { fallback: 8192, min: 256, max: 8192 }),
      bodyTimeoutMs: integer(env, "HTTP_BODY_TIMEOUT_MS", {
        fallback: DEFAULT_BODY_TIMEOUT_MS,
        min: 100,
        max: 600_000,
      }),
      maxInFlight: integer(env, "HTTP_MAX_IN_FLIGHT", { fallback: 2000, min: 1, max: 1_000_000 }),
      maxInFlightPerConnection: integer(env, "HTTP_MAX_IN_FLIGHT_PER_CONNECTION", {
        fallback: 100,
        min: 1,
        max: 10_000,
      }),
    },
    responseCacheMaxBytes: integer(env, "RESPONSE_CACHE_MAX_BYTES", {
      fallback: DEFAULT_RESPONSE_CACHE_BYTES,
      min: 0,
      max: 16 * 1024 * 1024 * 1024,
    }),
    logLevel,
    statsWorkMemMb: integer(env, "STATS_WORK_MEM_MB", { fallback: 64, min: 0, max: 4096 }),
    webhooks: {
      allowPrivate: one(env, "WEBHOOK_ALLOW_PRIVATE"),
      allowInsecure: one(env, "WEBHOOK_ALLOW_INSECURE"),
    },
    metricsPerSite: one(env, "METRICS_PER_SITE"),
    traceTrustParent: oneOf(env, "TRACE_TRUST_PARENT", { values: ["0", "1"], fallback: "1" }) ===
      "1",
    publicUrl,
    mail: { smtpUrl: smtpUrl(env), from: mailFrom(env, publicUrlOf({ publicUrl, host, port })) },
  };
}

/** The gateway's public base URL: PUBLIC_URL, else `http://HOST:PORT`. */
export function publicUrlOf(config: Pick<Config, "publicUrl" | "host" | "port">): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/** The port part of a service URL such as AUTH_URL. */
export function portOf(serviceUrl: string): number {
  const parsed = new URL(serviceUrl);
  if (parsed.port) return Number(parsed.port);
  return parsed.protocol === "https:" ? 443 : 80;
}
