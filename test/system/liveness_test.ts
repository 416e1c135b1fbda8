/**
 * What the chart's liveness probes ask, against real processes: a service's
 * gRPC health name `liveness` answers SERVING while the service itself is
 * NOT_SERVING (its schema not current: readiness, not liveness), and the
 * gateway's /livez answers while no backend does; with the process stopped
 * (SIGSTOP, as a stuck event loop) neither answers, though a TCP connection
 * still opens (the kernel accepts it), so a bare TCP probe would pass.
 */
import { afterAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
} from "../../services/lib/gen/grpc/health/v1/health_pb.ts";
import { type RunningProcess, startService } from "../helpers/process.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";

/** A gRPC health check as the kubelet's grpc probe makes it, with its deadline. */
function check(address: string, service: string, deadlineMs = 1000): Promise<ServingStatus> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise<ServingStatus>((resolve, reject) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (m: ReturnType<typeof create<typeof HealthCheckRequestSchema>>) =>
        Buffer.from(toBinary(HealthCheckRequestSchema, m)),
      (b: Buffer) => fromBinary(HealthCheckResponseSchema, new Uint8Array(b)),
      create(HealthCheckRequestSchema, { service }),
      { deadline: Date.now() + deadlineMs },
      (error, answer) => (error ? reject(error) : resolve(answer!.status)),
    );
  }).finally(() => client.close());
}

/** Whether a TCP connection to the address opens (what a tcpSocket probe checks). */
async function opens(hostname: string, port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname, port })).close();
    return true;
  } catch {
    return false;
  }
}

describe.runIf(DATABASE_URL && REDIS_URL)("liveness on the event loop", () => {
  const started: RunningProcess[] = [];
  let drop: (() => Promise<void>) | undefined;

  afterAll(async () => {
    for (const service of started) {
      Deno.kill(service.pid, "SIGCONT");
      await service.stop();
    }
    await drop?.();
  });

  it("a service: liveness SERVING while the service is not ready, and no answer while stopped", async () => {
    const fresh = await freshPostgresUrl();
    drop = fresh.drop;
    // Nothing migrated the fresh database: the service waits for its schema, NOT_SERVING.
    const content = await startService("content", { DATABASE_URL: fresh.url, GRPC_PORT: "0" });
    started.push(content);
    const address = new URL(content.url).host;
    expect(await check(address, "liveness")).toBe(ServingStatus.SERVING);
    expect(await check(address, "crm.content.v1.ContentService")).toBe(ServingStatus.NOT_SERVING);
    expect(await check(address, "")).toBe(ServingStatus.NOT_SERVING);

    Deno.kill(content.pid, "SIGSTOP");
    try {
      const stopped = await check(address, "liveness").catch((error) => error);
      expect(stopped.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      const url = new URL(content.url);
      expect(await opens(url.hostname, Number(url.port))).toBe(true);
    } finally {
      Deno.kill(content.pid, "SIGCONT");
    }
    expect(await check(address, "liveness", 5000)).toBe(ServingStatus.SERVING);
  });

  it("the gateway: /livez answers with no backend, and not while stopped", async () => {
    const nowhere = "http://127.0.0.1:9";
    const gateway = await startService("gateway", {
      PORT: "0",
      REDIS_URL: REDIS_URL!,
      AUTH_URL: nowhere,
      CONTENT_URL: nowhere,
      INGEST_URL: nowhere,
    });
    started.push(gateway);
    const livez = (ms: number) =>
      fetch(`${gateway.url}/livez`, { signal: AbortSignal.timeout(ms) }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    expect(await livez(1000)).toBe(200);
    const healthz = await fetch(`${gateway.url}/healthz`);
    expect(healthz.status).toBe(503);
    await healthz.body?.cancel();

    Deno.kill(gateway.pid, "SIGSTOP");
    try {
      const stopped = await livez(1000).catch((error) => error);
      expect(stopped).toBeInstanceOf(DOMException);
      expect(stopped.name).toBe("TimeoutError");
      const url = new URL(gateway.url);
      expect(await opens(url.hostname, Number(url.port))).toBe(true);
    } finally {
      Deno.kill(gateway.pid, "SIGCONT");
    }
    expect(await livez(5000)).toBe(200);
  });
});
