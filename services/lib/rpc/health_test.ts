import { describe, expect, it } from "vitest";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { Health } from "../gen/grpc/health/v1/health_pb.ts";
import { HealthRegistry, healthService, LIVENESS_SERVICE, ServingStatus } from "./health.ts";

const client = (registry: HealthRegistry) =>
  createClient(
    Health,
    createRouterTransport((router) => router.service(Health, healthService(registry))),
  );

describe("the liveness health service", () => {
  it("answers SERVING while the services are NOT_SERVING (a backend outage is no reason to restart)", async () => {
    const registry = new HealthRegistry();
    registry.set("crm.ingest.v1.IngestService", ServingStatus.NOT_SERVING);
    const health = client(registry);
    expect((await health.check({ service: LIVENESS_SERVICE })).status).toBe(ServingStatus.SERVING);
    expect((await health.check({ service: "" })).status).toBe(ServingStatus.NOT_SERVING);
    expect((await health.check({ service: "crm.ingest.v1.IngestService" })).status)
      .toBe(ServingStatus.NOT_SERVING);
  });

  it("is neither changed by setAll nor counted in the overall status", () => {
    const registry = new HealthRegistry();
    registry.set("crm.auth.v1.AuthService", ServingStatus.SERVING);
    registry.setAll(ServingStatus.NOT_SERVING);
    expect(registry.services()).toEqual(["crm.auth.v1.AuthService"]);
    expect(registry.get(LIVENESS_SERVICE)).toBe(ServingStatus.SERVING);
    registry.setAll(ServingStatus.SERVING);
    expect(registry.get("")).toBe(ServingStatus.SERVING);
  });

  it("answers a watch with SERVING", async () => {
    const controller = new AbortController();
    const stream = client(new HealthRegistry()).watch({ service: LIVENESS_SERVICE }, {
      signal: controller.signal,
    });
    for await (const answer of stream) {
      expect(answer.status).toBe(ServingStatus.SERVING);
      break;
    }
    controller.abort();
  });
});
