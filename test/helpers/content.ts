/**
 * Calling the content API as a website does, and the fixture sites the
 * content API tests seed.
 */
import { readFixture } from "./system.ts";
import type { ManualClock } from "../../services/lib/clock.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

/** Keys of test/fixtures/content-api-site.json (site "acme") and its second site. */
export const ACME_KEY = "pk_0a1b2c3d4e5f60718293a4b5c6d7e8f9";
export const ACME_KEY_2 = "pk_f9e8d7c6b5a4938271605f4e3d2c1b0a";
export const OTHER_KEY = "pk_00112233445566778899aabbccddeeff";
/** Well formed, but no site has it. */
export const UNKNOWN_KEY = "pk_ffffffffffffffffffffffffffffffff";

export const acmeSite = () => readFixture("content-api-site.json") as Promise<Json>;
export const otherSite = () => readFixture("content-api-other-site.json") as Promise<Json>;

export interface CallOptions {
  /** Sent as x-crm-key; null sends no key. */
  key?: string | null;
  method?: string;
  headers?: Record<string, string>;
  /** Client address through X-Forwarded-For (the system must trust one proxy). */
  ip?: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is empty or not JSON. */
  body: Json;
}

export async function call(base: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? ACME_KEY : options.key;
  if (key !== null) headers["x-crm-key"] = key;
  if (options.ip) headers["x-forwarded-for"] = options.ip;
  const response = await fetch(base + path, { method: options.method ?? "GET", headers });
  const text = await response.text();
  let body: Json = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Asserts nothing; the shape every error answer must have, for expect(...).toEqual. */
export function errorHeaders(answer: Answer) {
  return {
    contentType: answer.headers.get("content-type"),
    cacheControl: answer.headers.get("cache-control"),
    cors: answer.headers.get("access-control-allow-origin"),
  };
}

export const ERROR_HEADERS = {
  contentType: "application/json",
  cacheControl: "no-store",
  cors: "*",
};

/**
 * Fixed one-minute windows reset when a minute begins; a test that needs
 * `ms` inside one window moves the system's clock into the next one when too
 * little is left.
 */
export function roomInWindow(clock: ManualClock, ms: number): void {
  const left = 60_000 - (clock.now() % 60_000);
  if (left < ms) clock.advance(left + 50);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Moves the clock by stepMs until check returns true or timeoutMs of clock
 * time have passed; returns whether it did.
 */
export async function eventuallyOnClock(
  clock: ManualClock,
  check: () => Promise<boolean>,
  timeoutMs: number,
  stepMs: number,
): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (clock.now() >= deadline) return false;
    clock.advance(stepMs);
  }
}

/** Polls until check returns true or timeoutMs passes; returns whether it did. */
export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}
