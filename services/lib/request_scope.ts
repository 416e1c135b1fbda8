/**
 * The request a piece of work belongs to, carried through every await by
 * AsyncLocalStorage: the gateway and each RPC server enter a scope, and the
 * log lines, client calls and spans made inside it read the request id from
 * here instead of having it passed down through every function.
 */
import { AsyncLocalStorage } from "node:async_hooks";

interface RequestScope {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

/** Runs fn as part of the request with this id. */
export function inRequest<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * Runs fn outside any request: for work shared by many requests (a batch, a
 * group commit) that must not be logged as the one request that started it.
 */
export function outsideRequest<T>(fn: () => T): T {
  return storage.exit(fn);
}

/** What a caller may send as a request id: short, and safe to log and echo. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is well formed, a new one otherwise. */
export function acceptRequestId(presented: string | null | undefined): string {
  return presented && REQUEST_ID.test(presented) ? presented : crypto.randomUUID();
}
