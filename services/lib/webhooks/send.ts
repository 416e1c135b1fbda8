/**
 * One delivery attempt: a POST over node:http or node:https on a connection
 * of its own (no pooled socket), whose host name is resolved for this attempt
 * by the `lookup` given to the request. That lookup checks every address the
 * name resolves to (address.ts) and hands the connection exactly the address
 * it checked, so a name that resolves to a public address when checked and a
 * private one a moment later (DNS rebinding) cannot pass: there is no second
 * resolution. An IP literal in the URL is checked the same way. Redirects are
 * not followed (a 3xx is a failed attempt), at most MAX_ANSWER_BYTES of the
 * answer are read, and the whole attempt (connect, TLS, answer) has
 * `timeoutMs`.
 */
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { lookup as dnsLookup } from "node:dns/promises";
import { refusedAddress } from "./address.ts";

/** The most of an answer's body read; the rest is never received. */
export const MAX_ANSWER_BYTES = 1024;
/** The most of a refused answer's body quoted in the attempt's error. */
const QUOTED_ANSWER_CHARS = 200;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (node:dns's lookup unless a test gives another). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface Attempt {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** WEBHOOK_ALLOW_PRIVATE=1: any address may be reached. */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOW_INSECURE=1: an http URL may be used (one stored while it was set, say). */
  allowInsecure: boolean;
  /** The longest the attempt may take, answer included. */
  timeoutMs: number;
  resolve?: Resolve;
  /** Aborting gives up the attempt (the service is stopping). */
  signal?: AbortSignal;
}

export interface AttemptResult {
  /** A 2xx answer arrived in time. */
  ok: boolean;
  /** The answer's HTTP status; null when none arrived. */
  status: number | null;
  /** Why it failed or was refused; null on success. */
  error: string | null;
}

class Refused extends Error {
  override name = "Refused";
}

/** A `lookup` for node:net that resolves, checks every address and answers the first. */
function checkedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then((found) => {
      if (found.length === 0) throw new Refused(`${hostname} has no address`);
      if (!allowPrivate) {
        for (const { address } of found) {
          const refused = refusedAddress(address);
          if (refused) throw new Refused(`${hostname}: ${refused}`);
        }
      }
      const [first] = found;
      if (options.all) callback(null, [first]);
      else callback(null, first.address, first.family);
    }).catch((error) => callback(error as NodeJS.ErrnoException, "", 0));
  };
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** Makes one attempt; never throws. */
export function sendAttempt(attempt: Attempt): Promise<AttemptResult> {
  const url = URL.parse(attempt.url);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return Promise.resolve({ ok: false, status: null, error: "not an http or https URL" });
  }
  if (url.protocol === "http:" && !attempt.allowInsecure) {
    return Promise.resolve({
      ok: false,
      status: null,
      error: "refused: an http URL needs WEBHOOK_ALLOW_INSECURE=1",
    });
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) && !attempt.allowPrivate) {
    const refused = refusedAddress(host);
    if (refused) return Promise.resolve({ ok: false, status: null, error: `refused: ${refused}` });
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      attempt.signal?.removeEventListener("abort", onAbort);
      request.destroy();
      resolve(result);
    };
    const fail = (error: string, status: number | null = null) =>
      finish({ ok: false, status, error });
    const request = client.request(
      {
        protocol: url.protocol,
        host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: {
          ...attempt.headers,
          "content-length": String(new TextEncoder().encode(attempt.body).length),
        },
        agent: false,
        lookup: checkedLookup(attempt.resolve ?? systemResolve, attempt.allowPrivate),
      },
      (response) => {
        const status = response.statusCode ?? null;
        const chunks: Uint8Array[] = [];
        let read = 0;
        const judge = () => {
          const text = oneLine(
            new TextDecoder().decode(concat(chunks)).slice(0, QUOTED_ANSWER_CHARS),
          );
          if (status !== null && status >= 200 && status < 300) {
            finish({ ok: true, status, error: null });
          } else if (status !== null && status >= 300 && status < 400) {
            fail(`answered ${status}: redirects are not followed`, status);
          } else fail(`answered ${status}${text ? `: ${text}` : ""}`, status);
        };
        response.on("data", (chunk: Uint8Array) => {
          const room = MAX_ANSWER_BYTES - read;
          chunks.push(chunk.subarray(0, Math.max(0, room)));
          read += chunk.length;
          if (read >= MAX_ANSWER_BYTES) judge();
        });
        response.on("end", judge);
        response.on("error", () => judge());
      },
    );
    const timer = setTimeout(
      () => fail(`no answer within ${attempt.timeoutMs / 1000} s`),
      attempt.timeoutMs,
    );
    const onAbort = () => fail("interrupted: the service stopped");
    attempt.signal?.addEventListener("abort", onAbort);
    if (attempt.signal?.aborted) onAbort();
    request.on("error", (error: Error) => {
      if (error instanceof Refused) fail(`refused: ${error.message}`);
      else fail(oneLine(error.message) || error.name);
    });
    request.end(attempt.body);
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
