/**
 * Invalidation messages between replicas: "this key was created or revoked", "this
 * site's content changed", "this site's event types changed". A message is delivered in this process at once,
 * and through Redis pub/sub to every other process when Redis is there.
 * Without Redis, other processes learn through cache expiry alone.
 */
import type { Redis } from "./redis.ts";
import { subscriberOf } from "./redis.ts";
import type { Logger } from "./log.ts";
import type { PortLike } from "./rpc/port_transport.ts";

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

interface Forwarded {
  topic: Topic;
  message: string;
}

/**
 * Hands every message `bus` delivers on this thread to a bus on another
 * thread of the process (`createForwardedBus`): without Redis, the gateway's
 * second thread learns this way what auth and content publish on the main
 * thread. Returns a function that stops forwarding and closes the port.
 */
export function forwardBus(bus: Bus, port: PortLike): () => void {
  const unsubscribes = TOPICS.map((topic) =>
    bus.subscribe(topic, (message) => port.postMessage({ topic, message } satisfies Forwarded, []))
  );
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
    port.close();
  };
}

/**
 * A thread's bus fed by `forwardBus` on the main thread. What is published on
 * it is delivered on this thread only (the gateway publishes nothing).
 */
export function createForwardedBus(port: PortLike, log?: Logger): Bus {
  const subscribers = new Subscribers();
  port.onmessage = (event: MessageEvent<Forwarded>) =>
    subscribers.deliver(event.data.topic, event.data.message, log);
  return {
    publish(topic, message) {
      subscribers.deliver(topic, message, log);
      return Promise.resolve();
    },
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    close() {
      port.onmessage = null;
      port.close();
      return Promise.resolve();
    },
  };
}
