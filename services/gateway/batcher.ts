/**
 * Groups concurrent requests into one call. An item waits at most maxWaitMs
 * for company, a batch holds at most maxItems items (and maxBytes), and at
 * most maxInFlight calls run at once; beyond that items wait for a free call
 * and batches grow, so a burst costs a few calls instead of one per request.
 * Each caller gets its own item's result when its batch's call answers.
 *
 * A batch serves many requests, so its call is traced as work of its own (a
 * trace linking every request's span), not as part of whichever request
 * happened to fill it.
 */
import { currentLink, type Link, meter, sharedWork } from "../lib/telemetry.ts";

const batchItems = meter.createHistogram("crm.gateway.batch.items", {
  description: "Items per call the gateway's ingest batcher sends",
  unit: "{item}",
  advice: { explicitBucketBoundaries: [1, 2, 5, 10, 20, 50, 100, 200, 500] },
});

export interface BatcherOptions<I> {
  maxItems: number;
  maxWaitMs: number;
  maxInFlight: number;
  /** Items waiting beyond which add() refuses at once (OverloadedError). */
  maxQueued: number;
  /** Largest batch in bytes, by each item's size (given to add, else sizeOf). */
  maxBytes?: number;
  sizeOf?: (item: I) => number;
}

export class OverloadedError extends Error {
  constructor() {
    super("too many requests waiting for the ingest service");
  }
}

interface Waiting<I, R> {
  item: I;
  size: number;
  resolve(result: R): void;
  reject(error: unknown): void;
  /** The span of the request that queued the item. */
  link: Link | undefined;
}

export class Batcher<I, R> {
  #queue: Waiting<I, R>[] = [];
  #inFlight = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The oldest waiting item has waited long enough; send as soon as a call is free. */
  #due = false;
  #idle: (() => void)[] = [];

  constructor(
    private readonly send: (items: I[]) => Promise<R[]>,
    private readonly options: BatcherOptions<I>,
  ) {}

  get waiting(): number {
    return this.#queue.length;
  }

  /** Queues an item; `size` is the bytes it adds to a batch (sizeOf(item) when not given). */
  add(item: I, size?: number): Promise<R> {
    if (this.#queue.length >= this.options.maxQueued) return Promise.reject(new OverloadedError());
    return new Promise<R>((resolve, reject) => {
      size ??= this.options.sizeOf?.(item) ?? 0;
      this.#queue.push({ item, size, resolve, reject, link: currentLink() });
      if (this.#queue.length >= this.options.maxItems) {
        this.#due = true;
        this.#flush();
      } else if (!this.#timer && !this.#due) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.#due = true;
          this.#flush();
        }, this.options.maxWaitMs);
      }
    });
  }

  /** Sends whatever waits and resolves once every call has answered. */
  async close(): Promise<void> {
    this.#due = true;
    this.#flush();
    if (this.#inFlight === 0 && this.#queue.length === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #take(): Waiting<I, R>[] {
    const maxBytes = this.options.maxBytes ?? Infinity;
    let bytes = 0;
    let count = 0;
    while (count < this.#queue.length && count < this.options.maxItems) {
      const next = this.#queue[count];
      if (count > 0 && bytes + next.size > maxBytes) break;
      bytes += next.size;
      count++;
    }
    return this.#queue.splice(0, count);
  }

  #flush() {
    while (this.#due && this.#inFlight < this.options.maxInFlight && this.#queue.length > 0) {
      if (this.#timer) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
      }
      const batch = this.#take();
      this.#inFlight++;
      this.#call(batch).finally(() => {
        this.#inFlight--;
        if (this.#queue.length >= this.options.maxItems) this.#due = true;
        this.#flush();
        this.#settle();
      });
    }
    if (this.#queue.length === 0) this.#due = false;
    else if (!this.#due && !this.#timer) {
      // Items left behind by a full batch start their own wait.
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#due = true;
        this.#flush();
      }, this.options.maxWaitMs);
    }
  }

  #settle() {
    if (this.#inFlight === 0 && this.#queue.length === 0) {
      this.#idle.splice(0).forEach((resolve) => resolve());
    }
  }

  async #call(batch: Waiting<I, R>[]): Promise<void> {
    try {
      batchItems.record(batch.length);
      const results = await sharedWork({
        name: "gateway ingest batch",
        links: batch.map((w) => w.link),
        attributes: { "crm.batch.items": batch.length },
      }, () => this.send(batch.map((w) => w.item)));
      if (results.length !== batch.length) {
        throw new Error(`${results.length} results for ${batch.length} items`);
      }
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      batch.forEach((w) => w.reject(error));
    }
  }
}
