/**
 * Configuration: read once at start-up from the environment, validated, and
 * passed down. Nothing else in the code base reads `Deno.env`.
 */

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
  redisUrl?: string;
  /** Prefix of every Redis key and channel, so installations can share one Redis. */
  redisKeyPrefix: string;
  dataDir: string;
  authUrl: string;
  contentUrl: string;
  ingestUrl: string;
  grpcPort: number;
  adminToken?: string;
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
   * False (STATS_UPKEEP=off) stops the writer keeping the reports' derived
   * tables; for the ingest benchmark only, to measure their cost: reports
   * are wrong until `admin stats rebuild`.
   */
  statsUpkeep: boolean;
  /**
   * work_mem in MB for each reports statement (STATS_WORK_MEM_MB, SET LOCAL
   * in its transaction); 0 leaves the server's setting.
   */
  statsWorkMemMb: number;
  /** Outbound webhooks: what their addresses may be. */
  webhooks: WebhookSettings;
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

/** A switch that is exactly `on` or `off`; unset or empty takes the fallback, anything else a fault. */
function onOff(env: Env, name: string, fallback: boolean): boolean {
  return oneOf(env, name, { values: ["on", "off"] as const, fallback: fallback ? "on" : "off" }) ===
    "on";
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

/** Reads and validates the whole configuration; throws ConfigError naming the bad setting. */
export function loadConfig(env: Env, mode: RunMode): Config {
  const logLevel: LogLevel = oneOf(env, "LOG_LEVEL", { values: LOG_LEVELS, fallback: "info" });
  checkOtel(env);
  const adminToken = env.ADMIN_TOKEN || undefined;
  return {
    port: integer(env, "PORT", { fallback: 8080, min: 0, max: 65535 }),
    host: env.HOST || (mode === "service" ? "0.0.0.0" : "127.0.0.1"),
    databaseUrl: optionalUrl(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
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
    trustProxy: integer(env, "TRUST_PROXY", { fallback: 0, min: 0, max: 32 }),
    keyCacheTtlS: integer(env, "KEY_CACHE_TTL_S", { fallback: 60, min: 0, max: 86400 }),
    // 0 is allowed and means "keep nothing": the next run deletes every page view and event.
    retentionDays: integer(env, "RETENTION_DAYS", { fallback: 395, min: 0, max: 36500 }),
    retentionDaysSet: (env.RETENTION_DAYS ?? "") !== "",
    geoipDb: env.GEOIP_DB || undefined,
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
    statsUpkeep: onOff(env, "STATS_UPKEEP", true),
    statsWorkMemMb: integer(env, "STATS_WORK_MEM_MB", { fallback: 64, min: 0, max: 4096 }),
    webhooks: {
      allowPrivate: one(env, "WEBHOOK_ALLOW_PRIVATE"),
      allowInsecure: one(env, "WEBHOOK_ALLOW_INSECURE"),
    },
  };
}

/** The port part of a service URL such as AUTH_URL. */
export function portOf(serviceUrl: string): number {
  const parsed = new URL(serviceUrl);
  if (parsed.port) return Number(parsed.port);
  return parsed.protocol === "https:" ? 443 : 80;
}
