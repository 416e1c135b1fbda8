/**
 * The HTTP/1.1 side of the shared port: a request whose bytes take more than
 * one read reaches the handler whole and in order, on a fresh connection;
 * a connection stays open for the next request (keep-alive).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { HealthCheckRequestSchema } from "../gen/grpc/health/v1/health_pb.ts";
import { HealthRegistry } from "./health.ts";
import { type RpcServer, startRpcServer } from "./server.ts";

/** Sends one raw HTTP/1.1 request on a new connection; the whole answer, up to close. */
async function rawExchange(port: number, request: Uint8Array): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    // Two writes back to back: the server's first read takes the head and
    // part of the body, the rest arrives while that first read is handed on.
    const split = Math.min(32 * 1024, request.length - 1);
    await conn.write(request.subarray(0, split));
    await conn.write(request.subarray(split));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(64 * 1024);
    const decoder = new TextDecoder();
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      const text = decoder.decode(new Uint8Array(chunks.flatMap((c) => [...c])));
      const headEnd = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (headEnd >= 0 && length !== undefined && text.length >= headEnd + 4 + Number(length)) {
        return text;
      }
    }
    return decoder.decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } finally {
    conn.close();
  }
}

/** A server with no services but health, on a free loopback port. */
const bareServer = () =>
  startRpcServer({
    services: [],
    routes: () => {},
    interceptors: [],
    health: new HealthRegistry(),
    host: "127.0.0.1",
    port: 0,
  });

/** A Connect health check of `service` over HTTP/1.1, as the bytes a client sends. */
function healthCheck(port: number, service: string): Uint8Array {
  const body = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service }));
  const head = new TextEncoder().encode(
    "POST /grpc.health.v1.Health/Check HTTP/1.1\r\n" +
      `host: 127.0.0.1:${port}\r\n` +
      "content-type: application/proto\r\n" +
      "connect-protocol-version: 1\r\n" +
      `content-length: ${body.length}\r\n\r\n`,
  );
  const request = new Uint8Array(head.length + body.length);
  request.set(head);
  request.set(body, head.length);
  return request;
}

describe("startRpcServer over HTTP/1.1", () => {
  let server: RpcServer;
  beforeAll(async () => {
    server = await bareServer();
  });
  afterAll(() => server.close(1000));

  it("parses a large first request on a new connection in order (no bare 400)", async () => {
    const exchanges = Array.from({ length: 400 }, async (_, i) => {
      const request = healthCheck(server.port, `svc-${i}-${"x".repeat(60_000)}`);
      const answer = await rawExchange(server.port, request);
      // The health service knows no such service: a Connect NOT_FOUND, which
      // means the whole message was read. A parse failure is a bare 400.
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 404 Not Found");
      expect(answer).toContain('"code":"not_found"');
    });
    await Promise.all(exchanges);
  });

  it("keeps a connection open for the next request after an answer", async () => {
    const request = healthCheck(server.port, "");
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    /** The next answer's head on this connection, or "closed" when the server closed it. */
    const answer = async () => {
      const buf = new Uint8Array(64 * 1024);
      let text = "";
      while (!text.includes("\r\n\r\n")) {
        const n = await conn.read(buf);
        if (n === null) return "closed";
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      return text.split("\r\n")[0];
    };
    try {
      for (let i = 0; i < 3; i++) {
        await conn.write(request);
        // The whole-server check ("") answers SERVING, status 200, on the same connection.
        expect(await answer()).toBe("HTTP/1.1 200 OK");
      }
    } finally {
      conn.close();
    }
  });
});

describe("startRpcServer's close", () => {
  it("closes a connection that sent nothing at once, without waiting out its grace", async () => {
    const server = await bareServer();
    // As a client's pool holds a connection it has not used yet.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    try {
      // A grace far beyond the test's own timeout: the close must not wait for it.
      await server.close(600_000);
      // Closed either way: an orderly end (read gives null) or, when the kernel
      // resets a socket closed before it was accepted into the server, a reset.
      const ended = await conn.read(new Uint8Array(16)).then(
        (n) => n === null ? "end" : `read ${n} bytes`,
        (e) => e instanceof Deno.errors.ConnectionReset ? "end" : String(e),
      );
      expect(ended).toBe("end");
    } finally {
      conn.close();
    }
  });
});
