/**
 * Group commit: concurrent submissions (each one gateway batch) are written
 * together, in one transaction, while the previous transaction runs. Under
 * light load a submission is written at once; under heavy load transactions
 * grow instead of queueing one round trip per batch. A failure of a merged
 * write is retried submission by submission, so one bad batch cannot fail
 * its neighbours.
 *
 * A transaction commits for many requests, so it is traced as work of its
 * own: a span of a trace of its own that links every request it commits.
 */
import { currentLink, type Link, meter, sharedWork } from "../lib/telemetry.ts";
import { StorageTimeoutError, withStorageDeadline } from "../lib/db/mod.ts";

const commitItems = meter.createHistogram("crm.ingest.commit.items", {
  description: "Items written per group-commit transaction",
  unit: "{item}",
  advice: { explicitBucketBoundaries: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000] },
});
const commitDuration = meter.createHistogram("crm.ingest.commit.duration", {
  description:
    "Duration of a group-commit transaction, from its start to its commit or failure (error.type)",
  unit: "s",
  advice: {
    explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  },
});

export interface GroupCommitOptions {
  /** Transactions in flight at once (1 for PGlite, a few for Postgres). */
  maxConcurrent: number;
  /** Items past which no further submission joins a transaction. */
  maxItems: number;
  /**
   * A submission not written this long after it was submitted, and a write
   * not settled this long after it started, fail with StorageTimeoutError
   * (the write frees its slot). A connection lost mid-transaction can leave postgres.js
   * waiting with no end; without a deadline the maxConcurrent slots fill
   * with such writes and every later submission waits behind them.
   */
  timeoutMs?: number;
}

interface Submission<I, R> {
  items: I[];
  resolve(results: R[]): void;
  reject(error: unknown): void;
  /** The span of the request (the ingest RPC) that submitted the items. */
  link: Link | undefined;
}

export class GroupCommit<I, R> {
  #queue: Submission<I, R>[] = [];
  #active = 0;
  #idle: (() => void)[] = [];

  constructor(
    private readonly write: (items: I[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Resolves with one result per item once they are written (committed). */
  submit(items: I[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    const ms = this.options.timeoutMs;
    return new Promise<R[]>((resolve, reject) => {
      // The deadline counts from submission: time waiting behind stuck
      // writes and the one-by-one retry of a failed group count too.
      const timer = ms === undefined ? undefined : setTimeout(() => {
        const queued = this.#queue.indexOf(submission);
        if (queued >= 0) this.#queue.splice(queued, 1);
        reject(new StorageTimeoutError(ms));
      }, ms);
      const submission: Submission<I, R> = {
        items,
        resolve: (results) => {
          clearTimeout(timer);
          resolve(results);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
        link: currentLink(),
      };
      this.#queue.push(submission);
      this.#pump();
    });
  }

  /** Resolves when nothing is queued or being written. */
  drained(): Promise<void> {
    if (this.#active === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #pump() {
    while (this.#active < this.options.maxConcurrent && this.#queue.length > 0) {
      const group: Submission<I, R>[] = [this.#queue.shift()!];
      let count = group[0].items.length;
      while (
        this.#queue.length > 0 && count + this.#queue[0].items.length <= this.options.maxItems
      ) {
        const next = this.#queue.shift()!;
        count += next.items.length;
        group.push(next);
      }
      this.#active++;
      this.#run(group).finally(() => {
        this.#active--;
        this.#pump();
        if (this.#active === 0 && this.#queue.length === 0) {
          this.#idle.splice(0).forEach((resolve) => resolve());
        }
      });
    }
  }

  async #run(group: Submission<I, R>[]): Promise<void> {
    try {
      const items = group.flatMap((s) => s.items);
      const results = await sharedWork({
        name: "ingest group commit",
        links: group.map((s) => s.link),
        attributes: { "crm.batch.items": items.length, "crm.commit.submissions": group.length },
      }, () => this.#writeChecked(items));
      let offset = 0;
      for (const s of group) {
        s.resolve(results.slice(offset, offset + s.items.length));
        offset += s.items.length;
      }
    } catch (error) {
      if (group.length === 1) {
        group[0].reject(error);
        return;
      }
      for (const s of group) {
        try {
          s.resolve(await this.#writeChecked(s.items));
        } catch (alone) {
          s.reject(alone);
        }
      }
    }
  }

  async #writeChecked(items: I[]): Promise<R[]> {
    const started = performance.now();
    let results: R[];
    try {
      results = await this.#withDeadline(this.write(items));
    } catch (error) {
      // A failed transaction counts with its error's class (the semantic
      // conventions' error.type), which the commit-failure alert reads.
      commitDuration.record((performance.now() - started) / 1000, {
        "error.type": error instanceof Error ? error.name : "_OTHER",
      });
      throw error;
    }
    commitItems.record(items.length);
    commitDuration.record((performance.now() - started) / 1000);
    if (results.length !== items.length) {
      throw new Error(`write returned ${results.length} results for ${items.length} items`);
    }
    return results;
  }

  #withDeadline(write: Promise<R[]>): Promise<R[]> {
    const ms = this.options.timeoutMs;
    return ms === undefined ? write : withStorageDeadline(write, ms);
  }
}
