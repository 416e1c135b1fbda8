/**
 * One Connect server per service on one port: gRPC, gRPC-Web and the Connect
 * protocol over HTTP/2 (h2c), plus grpc.health.v1 and server reflection; and
 * the Connect protocol over HTTP/1.1 on the same port, which is what the
 * internal clients use (see client.ts). The first bytes of a connection tell
 * the two apart: HTTP/2 opens with the "PRI * HTTP/2.0" preface.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { file_grpc_health_v1_health, Health } from "../gen/grpc/health/v1/health_pb.ts";
import { file_crm_common_v1_error } from "../gen/crm/common/v1/error_pb.ts";
import { HealthRegistry, healthService } from "./health.ts";
import { buildReflectionIndex, reflectionFiles, registerReflection } from "./reflection.ts";

export interface RpcServerOptions {
  /** Services mounted by `routes`; they are listed by reflection and health. */
  services: DescService[];
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  health: HealthRegistry;
  host: string;
  port: number;
  /** Largest request message accepted, in bytes. */
  readMaxBytes?: number;
}

export interface RpcServer {
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets calls in flight finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
}

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const files: DescFile[] = [
    ...new Set(options.services.map((s) => s.file)),
    file_grpc_health_v1_health,
    // Error details are described too, so tools can decode them.
    file_crm_common_v1_error,
    ...reflectionFiles,
  ];
  const serviceNames = [
    ...options.services.map((s) => s.typeName),
    Health.typeName,
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
  ];
  const index = buildReflectionIndex(files, serviceNames);
  // One router, built once, whose handlers the Node adapter serves.
  const routerOptions = {
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes ?? 4 * 1024 * 1024,
    // What connectNodeAdapter accepts by default.
    acceptCompression: [compressionGzip, compressionBrotli],
  };
  const router = createConnectRouter(routerOptions);
  options.routes(router);
  router.service(Health, healthService(options.health));
  registerReflection(router, index);
  const handler = connectNodeAdapter({
    ...routerOptions,
    routes: (adapterRouter) => adapterRouter.handlers.push(...router.handlers),
  });
  const h2 = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  const h1 = http.createServer(handler);
  // Longer than the clients' pool idle timeout, so a client never reuses a
  // connection this side is closing.
  h1.keepAliveTimeout = 120_000;
  let closing = false;
  // This server never listens itself: the front door hands it connections.
  // Deno's node:http destroys a connection after each answer when its server
  // is not listening, so until this every internal HTTP/1.1 call opened a
  // new TCP connection (and a client reusing a pooled connection raced its
  // destruction: "connection closed before message completed"). It listens,
  // for keep-alive's sake, as long as the front door does.
  Object.defineProperty(h1, "listening", { get: () => !closing });
  /** HTTP/1.1 connections and their requests in flight. */
  const h1Sockets = new Map<net.Socket, number>();
  h1.on("connection", (socket: net.Socket) => {
    h1Sockets.set(socket, 0);
    socket.on("close", () => h1Sockets.delete(socket));
  });
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    h1Sockets.set(socket, (h1Sockets.get(socket) ?? 0) + 1);
    if (closing) res.setHeader("connection", "close");
    res.on("close", () => {
      const left = (h1Sockets.get(socket) ?? 1) - 1;
      h1Sockets.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  });

  /** Connections not yet handed to HTTP/1.1 or HTTP/2 (no request read from them yet). */
  const unsniffed = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    unsniffed.add(socket);
    socket.on("close", () => unsniffed.delete(socket));
    // Answers go out at once rather than waiting for the peer's delayed ACK.
    socket.setNoDelay(true);
    let head: Uint8Array = new Uint8Array(0);
    const sniff = (chunk: Uint8Array) => {
      head = head.length === 0 ? chunk : new Uint8Array([...head, ...chunk]);
      if (head.length < 3) return;
      socket.off("data", sniff);
      unsniffed.delete(socket);
      socket.pause();
      socket.unshift(head);
      const preface = head[0] === 0x50 && head[1] === 0x52 && head[2] === 0x49; // "PRI"
      if (!preface) keepReadsInStream(socket);
      (preface ? h2 : h1).emit("connection", socket);
      socket.resume();
    };
    socket.on("data", sniff);
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(options.port, options.host, () => {
      front.off("error", reject);
      resolve();
    });
  });
  const port = (front.address() as AddressInfo).port;
  const shownHost = options.host === "0.0.0.0" ? "127.0.0.1" : options.host;
  return {
    port,
    url: `http://${shownHost}:${port}`,
    async close(graceMs = 10_000) {
      closing = true;
      // Resolves once every connection has ended.
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      // HTTP/2: GOAWAY, so clients open no new streams; streams in flight complete.
      for (const session of sessions) session.close();
      // HTTP/1.1: idle connections end now, busy ones after their answer.
      for (const [socket, inFlight] of h1Sockets) if (inFlight === 0) socket.end();
      // A connection that sent nothing yet holds no call: closed now. Since HTTP/1.1
      // connections are kept, a client's pool can hold one open, and the front door's close
      // waited for it until the client gave up (about a minute).
      for (const socket of unsniffed) socket.destroy();
      const timer = setTimeout(() => {
        for (const session of sessions) session.destroy();
        for (const socket of h1Sockets.keys()) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

/**
 * Makes node:http read this socket through its stream, where the bytes put
 * back with unshift() come first. Deno's node:http server (like Node's)
 * otherwise "consumes" the socket's handle: later reads go straight from the
 * handle to the HTTP parser, while the unshifted first bytes only reach it
 * through a "data" event after resume(). When the rest of a request is
 * already readable by then (a body larger than the first read, on a new
 * connection), the parser got the tail before the head, failed, and the
 * server answered a bare "400 Bad Request" (the gateway's "[internal] HTTP
 * 400"). The server only consumes handles not marked consumed already.
 */
function keepReadsInStream(socket: net.Socket): void {
  const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
  if (handle) handle._consumed = true;
}
