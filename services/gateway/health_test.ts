import { describe, expect, it } from "vitest";
import { createRouterTransport } from "@connectrpc/connect";
import { createClient } from "@connectrpc/connect";
import { Health } from "../lib/gen/grpc/health/v1/health_pb.ts";
import { HealthRegistry, healthService, ServingStatus } from "../lib/rpc/health.ts";
import { BackendPoller, BackendStates, healthz } from "./health.ts";

const NAMES = ["auth", "content", "ingest"];

async function answer(states: BackendStates) {
  const response = healthz(states);
  return { status: response.status, body: await response.json() };
}

describe("BackendStates", () => {
  it("is unready until every backend has answered SERVING once, each at its own time", async () => {
    const states = new BackendStates(NAMES);
    expect(await answer(states)).toEqual({
      status: 503,
      body: {
        status: "unavailable",
        services: { auth: "UNKNOWN", content: "UNKNOWN", ingest: "UNKNOWN" },
      },
    });
    states.record("auth", "SERVING");
    states.record("content", "SERVING");
    states.record("ingest", "UNREACHABLE");
    expect((await answer(states)).status).toBe(503);
    // content went away before ingest came: each has served once, so ready (degraded).
    states.record("content", "NOT_SERVING");
    states.record("ingest", "SERVING");
    expect(await answer(states)).toEqual({
      status: 200,
      body: {
        status: "degraded",
        services: { auth: "SERVING", content: "NOT_SERVING", ingest: "SERVING" },
      },
    });
  });

  it("stays ready whatever the backends do once started, ok again when all serve", async () => {
    const states = new BackendStates(NAMES);
    for (const name of NAMES) states.record(name, "SERVING");
    expect(await answer(states)).toMatchObject({ status: 200, body: { status: "ok" } });
    for (const name of NAMES) states.record(name, "UNREACHABLE");
    expect(await answer(states)).toMatchObject({ status: 200, body: { status: "degraded" } });
    for (const name of NAMES) states.record(name, "SERVING");
    expect(await answer(states)).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("is unready once the gateway stops, so the endpoints drop it", async () => {
    const states = new BackendStates(NAMES);
    for (const name of NAMES) states.record(name, "SERVING");
    states.stop();
    expect(await answer(states)).toMatchObject({ status: 503, body: { status: "stopping" } });
  });

  it("with auth required, is ready once auth has served, degraded while the others never have", async () => {
    const states = new BackendStates(NAMES, ["auth"]);
    states.record("content", "SERVING");
    states.record("ingest", "SERVING");
    expect((await answer(states)).status).toBe(503);
    states.record("auth", "UNREACHABLE");
    expect((await answer(states)).status).toBe(503);
    states.record("auth", "SERVING");
    states.record("content", "UNREACHABLE");
    states.record("ingest", "NOT_SERVING");
    expect(await answer(states)).toEqual({
      status: 200,
      body: {
        status: "degraded",
        services: { auth: "SERVING", content: "UNREACHABLE", ingest: "NOT_SERVING" },
      },
    });
  });

  it("refuses a backend it does not know", () => {
    expect(() => new BackendStates(NAMES).record("billing", "SERVING")).toThrow(/billing/);
  });
});

describe("BackendPoller", () => {
  it("records each backend's own answer, and a failed check as UNREACHABLE, before ready resolves", async () => {
    const registry = new HealthRegistry();
    registry.set("crm.content.v1.ContentService", ServingStatus.NOT_SERVING);
    const serving = new HealthRegistry();
    serving.set("crm.auth.v1.AuthService", ServingStatus.SERVING);
    const client = (r: HealthRegistry) =>
      createClient(
        Health,
        createRouterTransport((router) => router.service(Health, healthService(r))),
      );
    const failing = createClient(
      Health,
      createRouterTransport((router) =>
        router.service(Health, {
          check() {
            throw new Error("connection refused");
          },
        })
      ),
    );
    const states = new BackendStates(NAMES);
    const poller = new BackendPoller(
      { auth: client(serving), content: client(registry), ingest: failing },
      states,
      { intervalMs: 60_000, timeoutMs: 500 },
    );
    try {
      await poller.ready;
      expect(states.view().services).toEqual({
        auth: "SERVING",
        content: "NOT_SERVING",
        ingest: "UNREACHABLE",
      });
    } finally {
      poller.close();
    }
  });
});
