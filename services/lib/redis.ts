/**
 * Redis connections through ioredis. Commands never queue while Redis is
 * away: they fail at once, so callers fall back to their in-process
 * equivalents instead of stalling requests. A Redis that hangs rather than
 * goes away fails each command after COMMAND_TIMEOUT_MS. The connection is
 * made in the background and remade whenever it drops, from the start: a
 * process starts and serves on its fallbacks while Redis cannot be reached.
 */
import { Redis } from "ioredis";
import type { Logger } from "./log.ts";
import { activeSpan, inSpan, SpanKind, TRACING } from "./telemetry.ts";

export type { Redis };

/** Far above a healthy round trip (well under a millisecond on a LAN), far below a client's patience. */
const COMMAND_TIMEOUT_MS = 500;

/**
 * A Redis client that connects in the background and keeps reconnecting;
 * commands fail at once until it is connected. Logs when Redis cannot be
 * reached and when it answers again.
 */
export function connectRedis(url: string, log?: Logger): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect quickly at first, then every two seconds.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
  });
  const safeUrl = url.replace(/\/\/[^@/]*@/, "//***@");
  // Errors surface through failed commands; an unhandled 'error' event would crash.
  let away = false;
  redis.on("error", (error: Error) => {
    if (away) return;
    away = true;
    log?.warn("Redis cannot be reached; in-process fallbacks until it answers", {
      redis: safeUrl,
      error: error.message,
    });
  });
  redis.on("ready", () => {
    if (!away) return;
    away = false;
    log?.info("Redis answers again", { redis: safeUrl });
  });
  if (TRACING) traceCommands(redis, new URL(url));
  // A failed first attempt is retried by retryStrategy, like a dropped connection.
  redis.connect().catch(() => {});
  return redis;
}

/** A second connection for subscriptions, which Redis keeps apart from commands. */
export function subscriberOf(redis: Redis): Redis {
  // A subscription waits for Redis as long as it takes, so no command timeout here, and
  // a SUBSCRIBE sent while Redis is away waits for it through every reconnection.
  const subscriber = redis.duplicate({
    enableOfflineQueue: true,
    lazyConnect: false,
    commandTimeout: undefined,
    maxRetriesPerRequest: null,
  });
  subscriber.on("error", () => {});
  return subscriber;
}

/**
 * A CLIENT span per command sent for a request (`GET`, `EVALSHA`, ...), added
 * where every command passes: ioredis's sendCommand. Arguments, which hold
 * key hashes and counters, are not recorded.
 */
function traceCommands(redis: Redis, url: URL): void {
  const send = redis.sendCommand.bind(redis);
  const endpoint = {
    "server.address": url.hostname,
    "server.port": Number(url.port || 6379),
  };
  redis.sendCommand = ((command, stream) => {
    // No sampled request span to hang it under: nothing to build.
    if (!activeSpan()) return send(command, stream);
    const name = command.name.toUpperCase();
    // The span covers the command from its write to its reply.
    const attributes = {
      "db.system": "redis",
      "db.system.name": "redis",
      "db.operation.name": name,
      ...endpoint,
    };
    void inSpan({ name, kind: SpanKind.CLIENT, attributes }, () => command.promise)
      .catch(() => {/* the caller sees the failure itself */});
    return send(command, stream);
  }) as typeof redis.sendCommand;
}
