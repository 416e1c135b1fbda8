import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type Attempt, MAX_ANSWER_BYTES, type Resolve, sendAttempt } from "./send.ts";

/** A receiver on the loopback whose answer each test chooses; it counts what reaches it. */
const seen: { path: string; headers: Headers; body: string }[] = [];
let answer: (req: Request) => Response | Promise<Response> = () => new Response("ok");
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  seen.push({ path: new URL(req.url).pathname, headers: req.headers, body: await req.text() });
  return answer(req);
});
const port = receiver.addr.port;
/** Answers held back by a test, let go before the receiver shuts down (it waits for them). */
const held: (() => void)[] = [];
const hold = () =>
  new Promise<Response>((resolve) => held.push(() => resolve(new Response("late"))));
afterAll(async () => {
  for (const release of held) release();
  await receiver.shutdown();
});
beforeEach(() => {
  seen.length = 0;
  answer = () => new Response("ok");
});

const attempt = (over: Partial<Attempt> = {}): Attempt => ({
  url: `http://127.0.0.1:${port}/hook?x=1`,
  headers: { "content-type": "application/json", "webhook-id": "msg_1" },
  body: '{"type":"lead.created"}',
  allowPrivate: true,
  allowInsecure: true,
  timeoutMs: 10_000,
  ...over,
});

/** A resolver that answers the given addresses for every name and counts its calls. */
function fixedResolver(...addresses: string[]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (hostname: string) => {
    calls.push(hostname);
    return Promise.resolve(
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  };
  return Object.assign(resolve, { calls });
}

describe("sendAttempt", () => {
  it("POSTs the body and headers, and a 2xx is success", async () => {
    answer = () => new Response(null, { status: 204 });
    expect(await sendAttempt(attempt())).toEqual({ ok: true, status: 204, error: null });
    expect(seen).toHaveLength(1);
    expect(seen[0].path).toBe("/hook");
    expect(seen[0].headers.get("webhook-id")).toBe("msg_1");
    expect(seen[0].headers.get("content-type")).toBe("application/json");
    expect(seen[0].body).toBe('{"type":"lead.created"}');
  });

  it("fails on any other answer, quoting a little of it", async () => {
    answer = () => new Response("busy, try later", { status: 503 });
    expect(await sendAttempt(attempt()))
      .toEqual({ ok: false, status: 503, error: "answered 503: busy, try later" });
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    answer = (req) =>
      new URL(req.url).pathname === "/hook"
        ? new Response(null, { status: 307, headers: { location: "/elsewhere" } })
        : new Response("ok");
    const result = await sendAttempt(attempt());
    expect(result).toEqual({
      ok: false,
      status: 307,
      error: "answered 307: redirects are not followed",
    });
    expect(seen.map((s) => s.path)).toEqual(["/hook"]);
  });

  it("reads an answer only up to its limit", async () => {
    // An answer that never ends: without the limit the attempt would wait for its timeout.
    let sent = 0;
    answer = () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            sent += 64 * 1024;
            controller.enqueue(new Uint8Array(64 * 1024).fill(120));
            return new Promise((resolve) => setTimeout(resolve, 5));
          },
        }),
        { status: 500 },
      );
    const started = performance.now();
    const result = await sendAttempt(attempt({ timeoutMs: 5_000 }));
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(result.ok).toBe(false);
    expect(result.status).toBe(500);
    expect(result.error).toMatch(/^answered 500: x{200}$/);
    expect(sent).toBeGreaterThan(MAX_ANSWER_BYTES);
  });

  it("gives up when no answer comes within the timeout", async () => {
    answer = hold;
    const started = performance.now();
    const result = await sendAttempt(attempt({ timeoutMs: 300 }));
    expect(result).toEqual({ ok: false, status: null, error: "no answer within 0.3 s" });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("refuses an http URL unless WEBHOOK_ALLOW_INSECURE=1 allows it", async () => {
    expect(await sendAttempt(attempt({ allowInsecure: false }))).toEqual({
      ok: false,
      status: null,
      error: "refused: an http URL needs WEBHOOK_ALLOW_INSECURE=1",
    });
    expect(seen).toHaveLength(0);
  });

  it("refuses a loopback or private IP in the URL without connecting", async () => {
    for (const host of ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254"]) {
      const result = await sendAttempt(
        attempt({ url: `http://${host}:${port}/hook`, allowPrivate: false }),
      );
      expect(result.ok).toBe(false);
      expect(result.status).toBeNull();
      expect(result.error).toMatch(/^refused: address \S+ is (loopback|link-local)$/);
    }
    expect(seen).toHaveLength(0);
  });

  it("checks the resolved address of a host name on every attempt", async () => {
    const resolve = fixedResolver("127.0.0.1");
    const refused = attempt({
      url: `http://hooks.example:${port}/hook`,
      allowPrivate: false,
      resolve,
    });
    expect(await sendAttempt(refused)).toEqual({
      ok: false,
      status: null,
      error: "refused: hooks.example: address 127.0.0.1 is loopback",
    });
    expect(await sendAttempt(refused)).toMatchObject({ ok: false, status: null });
    // Resolved again for the second attempt: a cached answer could be stale or rebound.
    expect(resolve.calls).toEqual(["hooks.example", "hooks.example"]);
    expect(seen).toHaveLength(0);
  });

  it("refuses a name when any of its addresses is refused", async () => {
    const resolve = fixedResolver("93.184.215.14", "10.0.0.8");
    const result = await sendAttempt(
      attempt({ url: `http://mixed.example:${port}/hook`, allowPrivate: false, resolve }),
    );
    expect(result.error).toBe("refused: mixed.example: address 10.0.0.8 is private");
    expect(seen).toHaveLength(0);
  });

  it("refuses the system's own resolution of localhost", async () => {
    const result = await sendAttempt(
      attempt({ url: `http://localhost:${port}/hook`, allowPrivate: false }),
    );
    expect(result.error).toMatch(/^refused: localhost: address \S+ is loopback$/);
    expect(seen).toHaveLength(0);
  });

  it("connects to exactly the address it checked", async () => {
    // The name exists nowhere but in this resolver: the connection can only
    // have gone to the address the lookup checked and answered.
    const resolve = fixedResolver("127.0.0.1");
    const result = await sendAttempt(
      attempt({ url: `http://only-here.invalid:${port}/hook`, allowPrivate: true, resolve }),
    );
    expect(result).toEqual({ ok: true, status: 200, error: null });
    expect(resolve.calls).toEqual(["only-here.invalid"]);
    expect(seen[0].headers.get("host")).toBe(`only-here.invalid:${port}`);
  });

  it("says why a connection failed", async () => {
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closedPort = (closed.addr as Deno.NetAddr).port;
    closed.close();
    const result = await sendAttempt(attempt({ url: `http://127.0.0.1:${closedPort}/` }));
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/refused|ECONNREFUSED/i);
  });

  it("stops when its signal aborts", async () => {
    answer = hold;
    const stop = new AbortController();
    const pending = sendAttempt(attempt({ signal: stop.signal }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    expect(await pending).toEqual({
      ok: false,
      status: null,
      error: "interrupted: the service stopped",
    });
  });
});
