/**
 * The one in-process cache every service uses (the gateway's callers and
 * content answers, auth-service's resolutions, content-service's sites,
 * ingest-service's event types):
 *
 * - single flight: concurrent misses for one key share one load;
 * - negative entries: a load may find that there is no such thing
 *   (`value: undefined`), and that answer is kept too, for `missTtlMs`, so a
 *   flood of unknown keys costs one load per key, not one per request;
 * - a bound: at most `maxEntries`, and with `maxBytes` at most that many bytes
 *   as `sizeOf` measures them, the least recently used going first;
 * - expiry by the injected clock: `ttlMs`, or the deadline a load gives;
 *   with `staleWhileLoading`, an expired value still answers while its next
 *   load runs in the background (a failed one is tried again at the next
 *   lookup), so only a key's first lookup, or the first after it was
 *   invalidated, waits for a load;
 * - invalidation: `delete`, `deleteWhere`, or a bus topic (`invalidateOn`),
 *   which reaches every replica when the bus runs over Redis. A load that was
 *   under way when its key was invalidated still answers the requests that
 *   waited for it, but is not kept, and the next request loads again.
 *
 * A load that fails (throws) is not kept either: an outage is not an answer.
 */
import type { Bus, Topic } from "./bus.ts";
import type { Clock } from "./clock.ts";
import { meter } from "./telemetry.ts";

/** This process's lookups so far, per cache name: what the counter reports. */
interface Lookups {
  hit: number;
  miss: number;
  shared: number;
}
const lookupsByName = new Map<string, Lookups>();

/**
 * Lookups per cache and result, so an SRE can read each cache's hit ratio.
 * A lookup adds to a number here, and the runtime reads the totals when it
 * exports: a counter's add per lookup would cross into the runtime with its
 * attributes on every request (the gateway's hot read makes two).
 */
meter.createObservableCounter("crm.cache.lookups", {
  description:
    "Cache lookups by cache and result: hit, miss (a load ran) or shared (joined a load)",
  unit: "{lookup}",
}).addCallback((result) => {
  for (const [name, counts] of lookupsByName) {
    for (const kind of ["hit", "miss", "shared"] as const) {
      result.observe(counts[kind], { "crm.cache.name": name, "crm.cache.result": kind });
    }
  }
});

export interface CacheOptions<V = unknown> {
  /** Most entries kept; when full, the least recently used one goes. */
  maxEntries: number;
  clock: Clock;
  /** How long a loaded value is kept, when its load gives no deadline of its own. */
  ttlMs: number;
  /** How long "there is none" is kept, when its load gives no deadline; default ttlMs. */
  missTtlMs?: number;
  /** The cache's name in the crm.cache.lookups metric, e.g. "gateway.responses". */
  name?: string;
  /**
   * Most bytes kept, as sizeOf counts them; when over, the least recently used
   * entries go. A value larger than this alone is not kept at all.
   */
  maxBytes?: number;
  /** The bytes an entry holds (its key included); needed with maxBytes. */
  sizeOf?: (key: string, value: V | undefined) => number;
  /** Answer an expired value while it loads again, instead of waiting for the load. */
  staleWhileLoading?: boolean;
}

/** What a load found: a value, or undefined for "there is none". */
export interface Loaded<V> {
  value: V | undefined;
  /** Clock time (ms) until which the answer may be reused, instead of the TTL. */
  until?: number;
}

interface Entry<V> {
  value: V | undefined;
  until: number;
  /** What sizeOf said when it was stored (0 without maxBytes). */
  bytes: number;
}

interface Flight<V> {
  promise: Promise<V | undefined>;
  /** Cleared when the key is invalidated while the load runs. */
  keep: boolean;
}

export class Cache<V> {
  #entries = new Map<string, Entry<V>>();
  #loading = new Map<string, Flight<V>>();
  #options: CacheOptions<V> & { missTtlMs: number };
  #bytes = 0;
  /** The key stored or moved last: the last in #entries' order, unless since deleted. */
  #newest: string | undefined;
  #subscriptions: (() => void)[] = [];
  /** The lookups of every cache of this name in the process (crm.cache.lookups). */
  #lookups: Lookups;

  constructor(options: CacheOptions<V>) {
    this.#options = { ...options, missTtlMs: options.missTtlMs ?? options.ttlMs };
    const name = options.name ?? "unnamed";
    let lookups = lookupsByName.get(name);
    if (!lookups) lookupsByName.set(name, lookups = { hit: 0, miss: 0, shared: 0 });
    this.#lookups = lookups;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Bytes held, as sizeOf counts them (0 without maxBytes). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Forgets one stored entry and its bytes (not a load under way). */
  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.bytes;
    this.#entries.delete(key);
    if (this.#newest === key) this.#newest = undefined;
  }

  /** The cached answer for key, or the answer of load (shared with concurrent callers). */
  get(key: string, load: () => Promise<Loaded<V>>): Promise<V | undefined> {
    const entry = this.#entries.get(key);
    if (entry) {
      if (entry.until > this.#options.clock.now()) {
        // Most recently used goes last (a Map keeps insertion order); a hot
        // key read again and again is already there.
        if (this.#newest !== key) {
          this.#entries.delete(key);
          this.#entries.set(key, entry);
          this.#newest = key;
        }
        this.#lookups.hit++;
        return Promise.resolve(entry.value);
      }
      if (this.#options.staleWhileLoading) {
        // The stale entry stays until the load stores its answer.
        this.#start(key, load).catch(() => {});
        return Promise.resolve(entry.value);
      }
      this.#drop(key);
    }
    return this.#start(key, load);
  }

  /** The load under way for key, or a new one. */
  #start(key: string, load: () => Promise<Loaded<V>>): Promise<V | undefined> {
    const pending = this.#loading.get(key);
    if (pending) {
      this.#lookups.shared++;
      return pending.promise;
    }
    this.#lookups.miss++;
    const flight = { keep: true } as Flight<V>;
    this.#loading.set(key, flight);
    flight.promise = this.#load(key, flight, load);
    return flight.promise;
  }

  async #load(key: string, flight: Flight<V>, load: () => Promise<Loaded<V>>) {
    try {
      const loaded = await load();
      if (flight.keep) this.#store(key, loaded);
      return loaded.value;
    } finally {
      if (this.#loading.get(key) === flight) this.#loading.delete(key);
    }
  }

  #store(key: string, loaded: Loaded<V>) {
    const { clock, ttlMs, missTtlMs, maxEntries, maxBytes, sizeOf } = this.#options;
    const now = clock.now();
    const until = loaded.until ?? now + (loaded.value === undefined ? missTtlMs : ttlMs);
    this.#drop(key);
    if (until <= now) return;
    const bytes = maxBytes !== undefined && sizeOf ? sizeOf(key, loaded.value) : 0;
    // One answer larger than the whole budget would empty the cache for nothing.
    if (maxBytes !== undefined && bytes > maxBytes) return;
    this.#entries.set(key, { value: loaded.value, until, bytes });
    this.#newest = key;
    this.#bytes += bytes;
    while (
      this.#entries.size > maxEntries || (maxBytes !== undefined && this.#bytes > maxBytes)
    ) {
      this.#drop(this.#entries.keys().next().value!);
    }
  }

  /** Forgets key, and keeps no answer of a load of it that is under way. */
  delete(key: string): void {
    this.#drop(key);
    const flight = this.#loading.get(key);
    if (flight) {
      flight.keep = false;
      this.#loading.delete(key);
    }
  }

  /** Forgets every key the test holds for, loads under way included. */
  deleteWhere(test: (key: string) => boolean): void {
    for (const key of [...this.#entries.keys(), ...this.#loading.keys()]) {
      if (test(key)) this.delete(key);
    }
  }

  clear(): void {
    this.deleteWhere(() => true);
  }

  /**
   * Drops what each message on the topic names, as it arrives: `select` turns
   * the message into the key to forget, or into a test of keys. `close` ends
   * the subscription.
   */
  invalidateOn(
    bus: Bus,
    topic: Topic,
    select: (message: string) => string | ((key: string) => boolean),
  ): void {
    this.#subscriptions.push(bus.subscribe(topic, (message) => {
      const selected = select(message);
      if (typeof selected === "string") this.delete(selected);
      else this.deleteWhere(selected);
    }));
  }

  /** Stops listening to the bus and forgets everything. */
  close(): void {
    for (const unsubscribe of this.#subscriptions.splice(0)) unsubscribe();
    this.clear();
  }
}
