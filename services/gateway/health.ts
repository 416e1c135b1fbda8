/**
 * /livez answers while the process runs; /healthz answers 200 once every
 * service behind the gateway answers its gRPC health check SERVING, 503
 * before. The answer names each service's status.
 */
import type { Client } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../lib/gen/grpc/health/v1/health_pb.ts";
import { json } from "./http.ts";

export type HealthClients = Record<string, Client<typeof Health>>;

export async function servicesHealth(clients: HealthClients): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(clients).map(async ([name, client]) => {
      try {
        const { status } = await client.check({ service: "" }, { timeoutMs: 2000 });
        return [name, ServingStatus[status]] as const;
      } catch {
        return [name, "UNREACHABLE"] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}

export async function healthz(clients: HealthClients): Promise<Response> {
  const services = await servicesHealth(clients);
  const ready = Object.values(services).every((s) => s === "SERVING");
  return json(ready ? 200 : 503, { status: ready ? "ok" : "unavailable", services }, {
    "cache-control": "no-store",
  });
}

export function livez(): Response {
  return json(200, { status: "ok" }, { "cache-control": "no-store" });
}
