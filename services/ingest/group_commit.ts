/**
 * Group commit: concurrent submissions (each one gateway batch) are written
 * together, in one transaction, while the previous transaction runs. Under
 * light load a submission is written at once; under heavy load transactions
 * grow instead of queueing one round trip per batch. A failure of a merged
 * write is retried submission by submission, so one bad batch cannot fail
 * its neighbours.
 */

export interface GroupCommitOptions {
  /** Transactions in flight at once (1 for PGlite, a few for Postgres). */
  maxConcurrent: number;
  /** Items past which no further submission joins a transaction. */
  maxItems: number;
}

interface Submission<I, R> {
  items: I[];
  resolve(results: R[]): void;
  reject(error: unknown): void;
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
    return new Promise<R[]>((resolve, reject) => {
      this.#queue.push({ items, resolve, reject });
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
      const results = await this.#writeChecked(group.flatMap((s) => s.items));
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
    const results = await this.write(items);
    if (results.length !== items.length) {
      throw new Error(`write returned ${results.length} results for ${items.length} items`);
    }
    return results;
  }
}
