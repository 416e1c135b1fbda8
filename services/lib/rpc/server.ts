/**
 * One Connect server per service on one port: gRPC, gRPC-Web and the Connect
 * protocol over HTTP/2 (h2c), plus grpc.health.v1 and server reflection; and
 * the Connect protocol over HTTP/1.1 on the same port, which is what the
 * internal clients use (see client.ts). The front door (front_door.ts) tells
 * the two apart by a connection's first bytes.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import type * as net from "node:net";
import type { AddressInfo } from "node:net";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { file_grpc_health_v1_health, Health } from "../gen/grpc/health/v1/health_pb.ts";
import { file_crm_common_v1_error } from "../gen/crm/common/v1/error_pb.ts";
import { frontDoor, keepAliveWhileOpen } from "./front_door.ts";
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
  // The front door hands it its connections; kept alive as long as the door is open.
  keepAliveWhileOpen(h1, () => !closing);
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

  const door = frontDoor({ http1: h1, http2: h2 });
  const front = door.server;
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
      // would wait for it until the client gave up (about a minute).
      door.dropUnrouted();
      const timer = setTimeout(() => {
        for (const session of sessions) session.destroy();
        for (const socket of h1Sockets.keys()) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
