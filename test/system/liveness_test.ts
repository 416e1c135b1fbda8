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

/**
 * Liveness as the kubelet judges it: a probe on a new connection each time,
 * and the container restarted only after `failureThreshold` failures in a row
 * (the charts' 3). Resolves with the status of the first probe that answered
 * and the failures before it, or rejects with the last failure once there
 * were three. Right after a stopped process resumes, the first probe's
 * connection may be reset (under load it is, now and then): the kubelet takes
 * that as one failed probe, not as a dead process.
 */
async function probedLiveness(
  address: string,
): Promise<{ status: ServingStatus; failures: string[] }> {
  const failures: string[] = [];
  for (;;) {
    try {
      return { status: await check(address, "liveness", 2000), failures };
    } catch (error) {
      failures.push((error as Error).message);
      if (failures.length === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
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
    // Every process is stopped, even after one of them died (a test says so with its log).
    for (const service of started) {
      try {
        Deno.kill(service.pid, "SIGCONT");
        await service.stop();
      } catch (error) {
        console.log(`[liveness] ${service.url} was gone at the end: ${(error as Error).message}`);
      }
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
    const resumed = await probedLiveness(address).catch((error) => {
      throw new Error(
        `no liveness after resuming: ${error.message}\ncontent's log:\n${
          content.stderr().slice(-4000)
        }`,
      );
    });
    if (resumed.failures.length > 0) {
      console.log(`[liveness] failed probes after resuming: ${resumed.failures.join("; ")}`);
    }
    expect(resumed.status).toBe(ServingStatus.SERVING);
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
