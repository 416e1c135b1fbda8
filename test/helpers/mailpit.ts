/**
 * Mailpit (built by .ci/tools.sh): a real SMTP server on free loopback
 * ports, whose HTTP API (/api/v1/messages) the mail tests read what the
 * system sent from. Its chaos triggers make it refuse mail, so a test can
 * see a refused mail retried.
 */
import { freePort } from "./ports.ts";
import { tool } from "./tools.ts";

export const MAILPIT = tool("mailpit");

export interface Address {
  Name: string;
  Address: string;
}

/** A received message as the list shows it. */
export interface MessageSummary {
  ID: string;
  From: Address;
  To: Address[];
  Subject: string;
  Created: string;
}

/** One message whole: its parts as Mailpit parsed them. */
export interface Message extends MessageSummary {
  Text: string;
  HTML: string;
}

export interface Mailpit {
  /** SMTP_URL for the system: `smtp://127.0.0.1:PORT`. */
  smtpUrl: string;
  /** Base URL of the HTTP API and web UI. */
  apiUrl: string;
  /** Every message received, oldest first. */
  messages(): Promise<MessageSummary[]>;
  /** One message with its text and HTML parts. */
  message(id: string): Promise<Message>;
  /** The message as received, headers and MIME parts. */
  raw(id: string): Promise<string>;
  /** Waits (real time, polling) until `count` messages match; throws after timeoutMs. */
  waitFor(
    match: (m: MessageSummary) => boolean,
    count?: number,
    timeoutMs?: number,
  ): Promise<MessageSummary[]>;
  /** Deletes every message. */
  clear(): Promise<void>;
  /**
   * Refuses every mail at RCPT TO with `code` (a 4xx or 5xx), or accepts
   * again with null.
   */
  refuse(code: number | null): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startMailpit(): Promise<Mailpit> {
  if (!MAILPIT) throw new Error("mailpit is not installed: run .ci/tools.sh mailpit");
  const smtpPort = freePort();
  const httpPort = freePort();
  const dir = await Deno.makeTempDir({ prefix: "crm-mailpit-" });
  const child = new Deno.Command(MAILPIT, {
    args: [
      "--smtp",
      `127.0.0.1:${smtpPort}`,
      "--listen",
      `127.0.0.1:${httpPort}`,
      "--database",
      `${dir}/mailpit.db`,
      "--smtp-auth-accept-any",
      "--smtp-auth-allow-insecure",
      "--enable-chaos",
      "--disable-version-check",
      "--quiet",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream());
  let errorText = "";
  const drained = stderr.pipeTo(
    new WritableStream({ write: (chunk) => void (errorText = (errorText + chunk).slice(-4000)) }),
  ).catch(() => {});
  const apiUrl = `http://127.0.0.1:${httpPort}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`mailpit ${method} ${path}: ${answer.status} ${text}`);
    return text;
  };
  const json = async (method: string, path: string, body?: unknown) => {
    const text = await call(method, path, body);
    return text ? JSON.parse(text) : undefined;
  };
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await drained;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const deadline = Date.now() + 15_000;
  while (true) {
    try {
      await call("GET", "/api/v1/info");
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`mailpit did not start: ${String(error)}\n${errorText}`);
      }
      await sleep(100);
    }
  }
  const messages = async (): Promise<MessageSummary[]> => {
    const page = await json("GET", "/api/v1/messages?limit=1000");
    // The API lists newest first.
    return [...(page.messages as MessageSummary[])].reverse();
  };
  return {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    apiUrl,
    messages,
    message: (id) => json("GET", `/api/v1/message/${id}`),
    raw: (id) => call("GET", `/api/v1/message/${id}/raw`),
    async waitFor(match, count = 1, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (true) {
        const found = (await messages()).filter(match);
        if (found.length >= count) return found;
        if (Date.now() > until) {
          throw new Error(`${found.length} of ${count} expected mails arrived in ${timeoutMs} ms`);
        }
        await sleep(200);
      }
    },
    async clear() {
      await call("DELETE", "/api/v1/messages");
    },
    async refuse(code) {
      const trigger = code === null
        ? { ErrorCode: 451, Probability: 0 }
        : { ErrorCode: code, Probability: 100 };
      await json("PUT", "/api/v1/chaos", { Recipient: trigger });
    },
    stop,
  };
}
