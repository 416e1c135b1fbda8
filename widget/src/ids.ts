/// <reference lib="dom" />
/**
 * Visitor and session ids. A session ends after 30 minutes without activity
 * (crm_sat holds the time of the last one); the next activity starts a new
 * crm_sid.
 */
import type { Store } from "./store.ts";

export const VISITOR = "crm_vid";
export const SESSION = "crm_sid";
export const ACTIVITY = "crm_sat";
const SESSION_MS = 30 * 60 * 1000;

function newId(): string {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(
    crypto.getRandomValues(new Uint8Array(16)),
    (b) => (b + 256).toString(16).slice(1),
  ).join("");
}

/** The ids for an activity happening now, creating or renewing them as needed. */
export function touch(store: Store, now: number): { v: string; s: string } {
  let v = store.get(VISITOR);
  if (!v) store.set(VISITOR, v = newId());
  let s = store.get(SESSION);
  if (!s || !(now - Number(store.get(ACTIVITY)) < SESSION_MS)) store.set(SESSION, s = newId());
  store.set(ACTIVITY, String(now));
  return { v, s };
}

export function erase(store: Store): void {
  [VISITOR, SESSION, ACTIVITY].forEach(store.del);
}
