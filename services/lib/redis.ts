/**
 * Redis connections through ioredis. Commands never queue while Redis is
 * away: they fail at once, so callers fall back to their in-process
 * equivalents instead of stalling requests. A Redis that hangs rather than
 * goes away fails each command after COMMAND_TIMEOUT_MS. ioredis keeps
 * reconnecting in the background.
 */
import { Redis } from "ioredis";
import { activeSpan, inSpan, SpanKind, TRACING } from "./telemetry.ts";

export type { Redis };

/** Far above a healthy round trip (well under a millisecond on a LAN), far below a client's patience. */
const COMMAND_TIMEOUT_MS = 500;

export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect quickly at first, then every two seconds.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
  });
  // Errors surface through failed commands; an unhandled 'error' event would crash.
  redis.on("error", () => {});
  if (TRACING) traceCommands(redis, new URL(url));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const safeUrl = url.replace(/\/\/[^@/]*@/, "//***@");
    throw new Error(`cannot connect to Redis at ${safeUrl}: ${(error as Error).message}`);
  }
  return redis;
}

/** A second connection for subscriptions, which Redis keeps apart from commands. */
export function subscriberOf(redis: Redis): Redis {
  // A subscription waits for Redis as long as it takes, so no command timeout here.
  const subscriber = redis.duplicate({
    enableOfflineQueue: true,
    lazyConnect: false,
    commandTimeout: undefined,
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
