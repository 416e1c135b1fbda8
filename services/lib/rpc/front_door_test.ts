/**
 * The runtime behaviour front_door.ts works around, checked on the runtime
 * itself: each "without" case asserts the behaviour as it is in this Deno,
 * so it fails once the runtime changes, and its work-around can go. Each
 * "with" case shows the work-around doing its job.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as http from "node:http";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { frontDoor, isHttp2Preface, keepAliveWhileOpen } from "./front_door.ts";

const servers: net.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** An HTTP/1.1 server that never listens, answering each request with its body's length. */
function bodyLengthServer(): http.Server {
  const server = http.createServer((req, res) => {
    let length = 0;
    req.on("data", (chunk: Uint8Array) => length += chunk.length);
    req.on("end", () => res.end(String(length)));
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

async function listen(server: net.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** A door that hands each connection to `h1` after putting back its first bytes. */
function unshiftingDoor(h1: http.Server, mark: boolean): net.Server {
  if (mark) return frontDoor({ http1: h1, http2: { emit: () => false } }).server;
  return net.createServer((socket) => {
    socket.once("data", (head: Uint8Array) => {
      socket.pause();
      socket.unshift(head);
      h1.emit("connection", socket);
      socket.resume();
    });
  });
}

const decoder = new TextDecoder();

/** Reads one answer (head and a Content-Length body), or null when the peer closes first. */
async function readAnswer(conn: Deno.Conn, timeoutMs = 2000): Promise<string | null> {
  let text = "";
  const buf = new Uint8Array(16 * 1024);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const n = await conn.read(buf);
    if (n === null) return null;
    text += decoder.decode(buf.subarray(0, n));
    const headEnd = text.indexOf("\r\n\r\n");
    const length = /content-length: (\d+)/i.exec(text)?.[1];
    if (headEnd >= 0 && length !== undefined && text.length >= headEnd + 4 + Number(length)) {
      return text;
    }
    if (headEnd >= 0 && /^HTTP\/1\.1 400/.test(text)) return text;
  }
  throw new Error("no answer in time");
}

const GET = new TextEncoder().encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n");

/** A POST of `size` body bytes, written in two writes as a large internal call arrives. */
async function postInTwoWrites(port: number, size: number): Promise<string | null> {
  const head = new TextEncoder().encode(
    `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${size}\r\n\r\n`,
  );
  const request = new Uint8Array(head.length + size).fill(0x61);
  request.set(head);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const split = 32 * 1024;
    await conn.write(request.subarray(0, split));
    await conn.write(request.subarray(split));
    return await readAnswer(conn, 10_000);
  } finally {
    conn.close();
  }
}

describe("the HTTP/2 preface", () => {
  it("is told from an HTTP/1.1 request line by its first bytes", () => {
    expect(isHttp2Preface(new TextEncoder().encode("PRI * HTTP/2.0\r\n"))).toBe(true);
    expect(isHttp2Preface(new TextEncoder().encode("POST /x HTTP/1.1"))).toBe(false);
    expect(isHttp2Preface(new TextEncoder().encode("PUT /x HTTP/1.1"))).toBe(false);
  });
});

describe("a node:http server that does not listen, handed connections", () => {
  /** Two requests on one connection: the answers, null where the server closed instead. */
  async function twoRequests(keepAlive: boolean): Promise<(string | null)[]> {
    const h1 = bodyLengthServer();
    if (keepAlive) keepAliveWhileOpen(h1, () => true);
    const port = await listen(net.createServer((socket) => h1.emit("connection", socket)));
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(GET);
      const first = await readAnswer(conn);
      await conn.write(GET).catch(() => {});
      const second = await readAnswer(conn).catch(() => null);
      return [first, second];
    } finally {
      conn.close();
    }
  }

  it("closes a kept-alive connection of a server that does not listen (denoland/deno#35609)", async () => {
    const [first, second] = await twoRequests(false);
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(second).toBeNull();
  });

  it("keeps it for the next request while keepAliveWhileOpen says open", async () => {
    const [first, second] = await twoRequests(true);
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(second).toMatch(/^HTTP\/1\.1 200/);
  });
});

describe("a request put back with unshift() and larger than the first read", () => {
  const SIZE = 60_000;
  const TRIES = 60;

  async function answers(mark: boolean): Promise<(string | null)[]> {
    const h1 = bodyLengthServer();
    keepAliveWhileOpen(h1, () => true);
    const port = await listen(unshiftingDoor(h1, mark));
    const all: (string | null)[] = [];
    for (let i = 0; i < TRIES; i++) all.push(await postInTwoWrites(port, SIZE));
    return all;
  }

  it("parses an unshifted request in order without the mark: it does not, some get a bare 400", async () => {
    const all = await answers(false);
    expect(all.filter((a) => a !== null && /^HTTP\/1\.1 400/.test(a)).length).toBeGreaterThan(0);
  });

  it("is read whole and in order through the front door", async () => {
    const all = await answers(true);
    expect(all.every((a) => a !== null && /^HTTP\/1\.1 200/.test(a) && a.endsWith(String(SIZE))))
      .toBe(true);
  });
});
