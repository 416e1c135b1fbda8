/**
 * One process's in-process windows shared by its gateway threads
 * (services/cli/gateway_thread.ts). The main thread keeps the only
 * LocalCounter; a gateway on another thread counts through a MessagePort to
 * it, so a limit is as exact with two threads as with one: every hit is
 * added to the same counter, in the order the main thread receives it.
 *
 * The hits of one turn of the worker's event loop travel in one message and
 * their values come back in one, the way the Redis counter sends a turn's
 * hits in one pipeline. A MessagePort keeps its messages in order, so the
 * answers need no ids: each answers the oldest batch still waiting.
 */
import type { PortLike } from "../../lib/rpc/port_transport.ts";
import type { Clock } from "../../lib/clock.ts";
import { setImmediate } from "node:timers";
import type { CounterHit, LocalCounter, WindowCounter } from "./counter.ts";

type Batch = readonly (readonly CounterHit[])[];
type Values = number[][];

/**
 * Answers `PortCounter`'s batches with `counter` at the time of `clock`:
 * one clock decides every thread's window, so the minute changes once for
 * all of them. Returns a function that stops answering and closes the port.
 */
export function serveCounter(port: PortLike, counter: LocalCounter, clock: Clock): () => void {
  port.onmessage = (event: MessageEvent<Batch>) => {
    const now = clock.now();
    const values: Values = event.data.map((hits) => counter.hitSync(hits, now));
    port.postMessage(values, []);
  };
  return () => {
    port.onmessage = null;
    port.close();
  };
}

interface Turn {
  hits: (readonly CounterHit[])[];
  answers: ((values: number[]) => void)[];
  failures: ((error: Error) => void)[];
}

/** A gateway thread's counter: the main thread's LocalCounter, through `serveCounter`. */
export class PortCounter implements WindowCounter {
  #port: PortLike;
  #turn: Turn | undefined;
  #waiting: Turn[] = [];
  #closed = false;

  constructor(port: PortLike) {
    this.#port = port;
    port.onmessage = (event: MessageEvent<Values>) => {
      const turn = this.#waiting.shift();
      event.data.forEach((values, i) => turn?.answers[i](values));
    };
  }

  /** `now` is not sent: the main thread's clock decides the window (see serveCounter). */
  hit(hits: readonly CounterHit[], _now: number): Promise<number[]> {
    if (this.#closed) return Promise.reject(new Error("rate-limit counter closed"));
    let turn = this.#turn;
    if (!turn) {
      const next: Turn = turn = this.#turn = { hits: [], answers: [], failures: [] };
      // As LocalCounter: the end of this turn of the event loop, not a timer.
      setImmediate(() => this.#send(next));
    }
    turn.hits.push(hits);
    return new Promise((resolve, reject) => {
      turn.answers.push(resolve);
      turn.failures.push(reject);
    });
  }

  #send(turn: Turn) {
    if (this.#turn === turn) this.#turn = undefined;
    if (this.#closed) return;
    this.#waiting.push(turn);
    this.#port.postMessage(turn.hits, []);
  }

  /** Stops counting; hits still waiting for their values fail. */
  close() {
    this.#closed = true;
    this.#port.onmessage = null;
    this.#port.close();
    const error = new Error("rate-limit counter closed");
    for (const turn of [...this.#waiting.splice(0), ...(this.#turn ? [this.#turn] : [])]) {
      for (const fail of turn.failures) fail(error);
    }
    this.#turn = undefined;
  }
}
