/**
 * One Connect server per service on one HTTP/2 (h2c) port: gRPC, gRPC-Web and
 * the Connect protocol, plus grpc.health.v1 and server reflection.
 */
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
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
  const handler = connectNodeAdapter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes ?? 4 * 1024 * 1024,
    routes(router) {
      options.routes(router);
      router.service(Health, healthService(options.health));
      registerReflection(router, index);
    },
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host === "0.0.0.0" ? "127.0.0.1" : options.host;
  return {
    port,
    url: `http://${shownHost}:${port}`,
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // GOAWAY: clients open no new streams here; streams in flight complete.
      for (const session of sessions) session.close();
      const timer = setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
