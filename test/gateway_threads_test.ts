/**
 * The gateway on two threads, as `deno task start` runs it on Postgres with
 * GATEWAY_THREAD=on (services/cli/gateway_thread.ts): both listen on one port and the kernel
 * hands each new connection to one of them. Every request below opens a
 * connection of its own, so about half reach each thread; were a thread to
 * keep windows or caches the other does not see, the counts here would be
 * off by about half (the chance that 40 connections all reach one thread
 * is 2^-39).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { runAdmin } from "./helpers/admin.ts";
import { demoKeys } from "../services/cli/system.ts";

const DEMO_MANIFEST = new URL("../services/cli/demo_site.json", import.meta.url);
const CONTENT_PER_IP = 40;

/** Listening TCP sockets on `port`, from the kernel's own table. */
async function listeners(port: number): Promise<number> {
  let count = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await Deno.readTextFile(table).catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === "0A" && parseInt(local?.split(":")[1] ?? "", 16) === port) count++;
    }
  }
  return count;
}

/** A request on a connection of its own. */
async function fresh(url: string, init: RequestInit = {}): Promise<Response> {
  const client = Deno.createHttpClient({});
  try {
    const response = await fetch(url, { ...init, client });
    await response.body?.cancel();
    return response;
  } finally {
    client.close();
  }
}

async function freshJson(url: string, init: RequestInit = {}): Promise<[number, unknown]> {
  const client = Deno.createHttpClient({});
  try {
    const response = await fetch(url, { ...init, client });
    return [response.status, await response.json()];
  } finally {
    client.close();
  }
}

const statuses = (responses: Response[]) => responses.map((r) => r.status);

describe.skipIf(!DATABASE_URL).each(
  REDIS_URL ? ["in-process", "Redis"] as const : ["in-process"] as const,
)("the gateway on two threads, %s limits", (limits) => {
  let sys: TestSystem;
  let adminEnv: Record<string, string>;

  beforeAll(async () => {
    sys = await startTestSystem({
      storage: "postgres",
      threads: true,
      redis: limits === "Redis",
      seed: await Deno.readTextFile(DEMO_MANIFEST),
      env: { RATE_LIMIT_CONTENT_PER_IP: String(CONTENT_PER_IP), GATEWAY_THREAD: "on" },
    });
    adminEnv = {
      AUTH_URL: sys.config.authUrl,
      CONTENT_URL: sys.config.contentUrl,
      INGEST_URL: sys.config.ingestUrl,
    };
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("listens twice on one port", async () => {
    expect(await listeners(Number(new URL(sys.url).port))).toBe(2);
  });

  it("refuses the port when this system holds it, though with SO_REUSEPORT", async () => {
    const port = new URL(sys.url).port;
    await expect(startTestSystem({
      storage: "postgres",
      threads: true,
      env: { PORT: port, GATEWAY_THREAD: "on" },
    })).rejects.toThrow(Deno.errors.AddrInUse);
    expect(await listeners(Number(port))).toBe(2);
  });

  it("counts one limit for both threads", async () => {
    const { siteKey } = await demoKeys();
    const reads = [];
    for (let i = 0; i < CONTENT_PER_IP + 10; i++) {
      reads.push(
        await fresh(`${sys.url}/content/v1/langs`, { headers: { "x-crm-key": siteKey } }),
      );
    }
    const codes = statuses(reads);
    expect(codes.filter((c) => c === 200)).toHaveLength(CONTENT_PER_IP);
    // Counting comes first: the first request over the limit is the first refused.
    expect(codes.slice(CONTENT_PER_IP)).toEqual(Array(10).fill(429));
  });

  it("refuses a revoked key on both threads at once", async () => {
    const created = await runAdmin(["key", "create", "demo", "--kind", "secret"], adminEnv);
    expect(created.code).toBe(0);
    const { key } = JSON.parse(created.stdout);
    const { eventTypes } = JSON.parse(await Deno.readTextFile(DEMO_MANIFEST));
    const send = (id: string) =>
      freshJson(`${sys.url}/marketing/event`, {
        method: "POST",
        headers: { "x-event-key": key, "content-type": "application/json" },
        body: JSON.stringify({ name: eventTypes[0].name, event_id: id }),
      });
    // Both threads learn the key (and keep it in their caches) ...
    const ids = Array.from({ length: 40 }, (_, i) => `threads-${limits}-${i}`);
    const first = [];
    for (const id of ids) first.push(await send(id));
    expect(first).toEqual(ids.map(() => [200, { ok: true, duplicate: false }]));
    // ... every event was committed where both threads' calls see it ...
    const again = [];
    for (const id of ids) again.push(await send(id));
    expect(again).toEqual(ids.map(() => [200, { ok: true, duplicate: true }]));
    // ... and the revocation, published on the main thread, reaches both caches.
    const revoked = await runAdmin(["key", "revoke", key], adminEnv);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ alreadyRevoked: false });
    const after = [];
    for (const id of ids) after.push(await send(`${id}-after`));
    expect(after).toEqual(ids.map(() => [401, { message: "invalid_key" }]));
  });
});
