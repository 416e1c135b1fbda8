/**
 * A bounded in-process cache whose entries each carry their own expiry time.
 * When full, the least recently used entry goes (Map keeps insertion order;
 * a hit moves the entry to the end).
 */
export interface TtlCacheOptions {
  maxEntries: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

export class TtlCache<K, V> {
  #entries = new Map<K, Entry<V>>();
  #maxEntries: number;
  #now: () => number;

  constructor(options: TtlCacheOptions) {
    this.#maxEntries = options.maxEntries;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores value until the absolute time expiresAt (ms); a past time stores nothing. */
  set(key: K, value: V, expiresAt: number): void {
    if (expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return;
    }
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt });
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as K;
      this.#entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Removes every entry for which the predicate holds. */
  deleteWhere(predicate: (key: K, value: V) => boolean): number {
    let removed = 0;
    for (const [key, entry] of this.#entries) {
      if (predicate(key, entry.value)) {
        this.#entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  clear(): void {
    this.#entries.clear();
  }
}
