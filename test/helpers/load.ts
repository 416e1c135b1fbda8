/** Load for the crash tests: server events with ids from many concurrent senders. */
import type { TestSystem } from "./system.ts";
import { postEvent } from "./marketing.ts";

export interface EventLoad {
  /** Every id sent, answered or not. */
  sent: string[];
  /** The ids answered 200 with ok: what the system promised to keep. */
  acked: string[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/** Sends `note` events with ids `${run}-0`, `${run}-1`, ... until stopped (or `most` are sent). */
export function eventLoad(target: TestSystem, run: string, senders = 32, most = 20_000): EventLoad {
  const sent: string[] = [];
  const acked: string[] = [];
  let next = 0;
  let stopped = false;
  const sender = async () => {
    while (!stopped && next < most) {
      const n = next++;
      const id = `${run}-${n}`;
      sent.push(id);
      try {
        const res = await postEvent(target, { name: "note", id, p: { n } });
        if (res.status === 200 && (await res.json()).ok === true) acked.push(id);
        else await res.body?.cancel();
      } catch { /* refused while the system is down */ }
    }
  };
  const done = Promise.all(Array.from({ length: senders }, sender));
  return {
    sent,
    acked,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Answers counted per phase of a fault test, by status and error message. */
export type PhaseTallies = Record<string, Record<string, number>>;

export interface RetryingLoad {
  /** Every event id sent. */
  sent: string[];
  /** The ids answered 200 (each once, however many tries it took). */
  acked: Set<string>;
  /** Answers by phase, then "200", "503 service_unavailable", "network error", ... */
  tallies: PhaseTallies;
  /** The longest wait for an answer, by phase, in ms. */
  slowest: Record<string, number>;
  /** The phase the next answers are counted under. */
  phase: string;
  /** Stops taking new ids, lets every sender retry its current one to a 200, and waits. */
  stop(): Promise<void>;
}

/**
 * Clients that send requests named `${run}-0`, `${run}-1`, ... (an event with
 * that event_id, or a read) and, as the docs tell clients to, send one again
 * with the same id after any answer but 200 (a 503, a cut connection),
 * pausing `pauseMs` between tries, until it is answered 200. `send` makes one
 * try and resolves with the answer's key (see answerKey in fault_cluster.ts)
 * or throws on a network error, which is counted as "network error: " and
 * its message.
 */
export function retryingLoad(
  send: (eventId: string) => Promise<string>,
  run: string,
  options: { senders?: number; pauseMs?: number; giveUpMs?: number } = {},
): RetryingLoad {
  const { senders = 8, pauseMs = 100, giveUpMs = 60_000 } = options;
  const load: RetryingLoad = {
    sent: [],
    acked: new Set(),
    tallies: {},
    slowest: {},
    phase: "start",
    stop: async () => {},
  };
  let next = 0;
  let stopped = false;
  const tally = (key: string) => {
    const phase = (load.tallies[load.phase] ??= {});
    phase[key] = (phase[key] ?? 0) + 1;
  };
  const sender = async () => {
    while (!stopped) {
      const id = `${run}-${next++}`;
      load.sent.push(id);
      const started = Date.now();
      while (Date.now() - started < giveUpMs) {
        let key: string;
        const phase = load.phase;
        const asked = performance.now();
        try {
          key = await send(id);
        } catch (error) {
          key = `network error: ${networkErrorKind(error)}`;
        }
        const waited = Math.round(performance.now() - asked);
        load.slowest[phase] = Math.max(load.slowest[phase] ?? 0, waited);
        tally(key);
        if (key === "200") {
          load.acked.add(id);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }
  };
  const done = Promise.all(Array.from({ length: senders }, sender));
  load.stop = async () => {
    stopped = true;
    await done;
  };
  return load;
}

/** A network error's kind: a refused connection (nothing was sent) or a dropped one. */
export function networkErrorKind(error: unknown): "refused" | "dropped" {
  const text = `${(error as Error)?.message} ${(error as Error)?.cause ?? ""}`;
  return /refused/i.test(text) ? "refused" : "dropped";
}
