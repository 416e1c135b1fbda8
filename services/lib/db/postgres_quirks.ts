/**
 * The two places where postgres.ts leans on postgres.js (3.4.9, its latest
 * release) beyond its documented API. postgres_quirks_test.ts checks the
 * behaviour each relies on and fails once postgres.js changes it.
 *
 * 1. A write on a closed connection (guardClosedSocketWrites). postgres.js
 *    queues small writes with setImmediate; when the server or the network
 *    drops the socket first, the queued write throws "Cannot read properties
 *    of null (reading 'write')" from the immediate, beyond any caller's
 *    catch, and ends the process (porsager/postgres#1208; the guard is
 *    proposed in porsager/postgres#1209). The write belonged to a connection
 *    that is gone: its query fails or runs into the services' storage
 *    deadlines, and the pool connects again. So this one error, known by its
 *    message and its place in postgres.js, is kept from ending the process;
 *    every other uncaught error still does. Remove when a postgres.js release
 *    guards `nextWrite` (the test "writes to its socket unguarded" then fails).
 *
 * 2. BEGIN sent without waiting (sendBegin). postgres.js's `begin()` waits
 *    for BEGIN's answer before the first statement goes out, and its
 *    maintainer declined a lazy BEGIN (porsager/postgres#565). postgres.js
 *    pipelines one connection's queries, so a reserved connection can send
 *    BEGIN with the transaction's first statement: a round trip fewer. What
 *    `begin()` gets from postgres.js besides is the connection's close, which
 *    fails a transaction whose socket is gone instead of leaving a statement
 *    sent after the close unsettled for ever; it takes it from BEGIN's
 *    `onexecute` hook, which hands over the pool's connection object, whose
 *    `onclose` the pool calls once when it closes. sendBegin uses the same
 *    two, as `begin()` does. Remove when postgres.js offers a pipelined
 *    BEGIN, or drop the round trip and use `begin()` (the test "hands BEGIN's
 *    connection over" fails when the hook or `onclose` go).
 */
import type postgres from "postgres";

/** Whether an error is postgres.js's write on a closed connection (1 above). */
export function isClosedSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const stack = error.stack ?? "";
  return /reading 'write'/.test(error.message) && /\bnextWrite\b/.test(stack) &&
    /postgres[@/].*connection\.js/.test(stack);
}

let guarded = false;

/** Keeps postgres.js's write on a closed connection from ending the process (1 above). */
export function guardClosedSocketWrites(): void {
  if (guarded) return;
  guarded = true;
  globalThis.addEventListener("error", (event) => {
    if (isClosedSocketWrite((event as ErrorEvent).error)) {
      event.preventDefault();
      console.error(JSON.stringify({
        time: new Date().toISOString(),
        level: "warn",
        msg: "postgres: a write on a closed connection was dropped",
      }));
    }
  });
}

/** The part of postgres.js's pool connection that BEGIN's onexecute hands over. */
interface PoolConnection {
  /** Called once by the pool when the connection closes. */
  onclose?: ((error: unknown) => void) | null;
}

export interface Begun {
  /** BEGIN's answer. */
  answered: Promise<unknown>;
  /** Rejects with the connection's loss once it closes; never resolves. */
  closed: Promise<never>;
  /** The loss, once the connection has closed. */
  lost(): Error | undefined;
  /** Stops watching the connection; call when the transaction is over. */
  unwatch(): void;
}

/** Sends BEGIN on a reserved connection now, without waiting for it, and watches its close (2 above). */
export function sendBegin(connection: postgres.ReservedSql): Begun {
  let lost: Error | undefined;
  const { promise: closed, reject } = Promise.withResolvers<never>();
  closed.catch(() => {}); // raced by the caller, where the loss is reported
  let watched: PoolConnection | undefined;
  const onexecute = (c: PoolConnection) => {
    watched = c;
    c.onclose = (error) => {
      lost = error instanceof Error ? error : new Error(String(error));
      reject(lost);
    };
    return true; // as postgres.js goes on without the hook: the connection takes more
  };
  // Executed now: a postgres.js query goes out only when executed, and awaiting one
  // executes it a microtask later, behind the caller's first statement.
  const answered = connection.unsafe("begin", [], { onexecute } as postgres.UnsafeQueryOptions)
    .execute();
  return {
    answered,
    closed,
    lost: () => lost,
    unwatch() {
      if (watched) watched.onclose = null;
    },
  };
}
