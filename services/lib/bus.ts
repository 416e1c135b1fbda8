/**
 * Invalidation messages between replicas: "this key was created or revoked", "this
 * site's content changed", "this site's event types changed". A message is delivered in this process at once,
 * and through Redis pub/sub to every other process when Redis is there.
 * Without Redis, other processes learn through cache expiry alone.
 */
import type { Redis } from "./redis.ts";
import { subscriberOf } from "./redis.ts";
import type { Logger } from "./log.ts";

/** Every topic; each message is the key hash, site id or host that changed. */
export const TOPICS = [
  "key-changed",
  "content-changed",
  "origin-changed",
  "event-types-changed",
] as const;
export type Topic = typeof TOPICS[number];
export type Handler = (message: string) => void;

export interface Bus {
  publish(topic: Topic, message: string): Promise<void>;
  subscribe(topic: Topic, handler: Handler): () => void;
  close(): Promise<void>;
}

class Subscribers {
  #handlers = new Map<string, Set<Handler>>();

  add(topic: string, handler: Handler): () => void {
    let set = this.#handlers.get(topic);
    if (!set) this.#handlers.set(topic, set = new Set());
    set.add(handler);
    return () => set.delete(handler);
  }

  deliver(topic: string, message: string, log?: Logger) {
    for (const handler of this.#handlers.get(topic) ?? []) {
      try {
        handler(message);
      } catch (error) {
        log?.error("bus handler failed", { topic, error });
      }
    }
  }
}

export function createLocalBus(): Bus {
  const subscribers = new Subscribers();
  return {
    publish(topic, message) {
      subscribers.deliver(topic, message);
      return Promise.resolve();
    },
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    close: () => Promise.resolve(),
  };
}

export function createRedisBus(redis: Redis, log: Logger, keyPrefix: string): Bus {
  const CHANNEL_PREFIX = `${keyPrefix}bus:`;
  const subscribers = new Subscribers();
  const origin = crypto.randomUUID();
  const subscriber = subscriberOf(redis);
  subscriber.subscribe(...TOPICS.map((t) => CHANNEL_PREFIX + t)).catch((error: Error) =>
    log.warn("bus subscription failed; relying on cache expiry", { error })
  );
  subscriber.on("message", (channel: string, raw: string) => {
    const separator = raw.indexOf("|");
    if (separator < 0 || raw.slice(0, separator) === origin) return;
    subscribers.deliver(channel.slice(CHANNEL_PREFIX.length), raw.slice(separator + 1), log);
  });
  return {
    async publish(topic, message) {
      subscribers.deliver(topic, message, log);
      try {
        await redis.publish(CHANNEL_PREFIX + topic, `${origin}|${message}`);
      } catch (error) {
        log.warn("bus publish failed; other replicas rely on cache expiry", { topic, error });
      }
    },
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    async close() {
      subscriber.disconnect();
      await Promise.resolve();
    },
  };
}
