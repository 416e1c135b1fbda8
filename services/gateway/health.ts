/**
 * The gateway's probes. /livez answers while the process runs. /healthz says
 * whether this gateway can serve: 503 until auth-service has answered its
 * gRPC health check SERVING once since the gateway started (no request can
 * be served without keys), then 200 for as long as the gateway runs,
 * whatever its backends do, with `status` `degraded` while one of them is
 * not serving. content- and ingest-service only degrade it, so a gateway
 * started during their outage still joins the load balancer. One backend's outage must not take every
 * gateway out of the load balancer: cached content reads, the widget and the
 * other backends' routes still work, and what needs the missing backend
 * answers 503 service_unavailable with Retry-After on its own.
 *
 * The backends' states come from a background poll (BackendPoller), never
 * from a check made while the probe waits: the probe reads memory and
 * answers at once, far inside any probe timeout.
 */
import type { Client } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../lib/gen/grpc/health/v1/health_pb.ts";
import { meter, type ObservableResult } from "../lib/telemetry.ts";
import { json } from "./http.ts";

export type HealthClients = Record<string, Client<typeof Health>>;

/**
 * A backend's state as /healthz reports it: a grpc.health.v1 status name
 * (SERVING, NOT_SERVING, SERVICE_UNKNOWN, UNKNOWN before the first answer),
 * or UNREACHABLE when the check failed or timed out.
 */
export type BackendState = keyof typeof ServingStatus | "UNREACHABLE";

export interface HealthView {
  /** Whether /healthz answers 200. */
  ready: boolean;
  status: "ok" | "degraded" | "unavailable" | "stopping";
  services: Record<string, BackendState>;
}

/** What the gateway knows of its backends; pure, fed by the poller. */
export class BackendStates {
  #current = new Map<string, BackendState>();
  #servedOnce = new Set<string>();
  #stopping = false;

  /**
   * names: every backend; required: those that must have served once before
   * the gateway is ready (every backend unless given).
   */
  constructor(readonly names: readonly string[], readonly required: readonly string[] = names) {
    for (const name of names) this.#current.set(name, "UNKNOWN");
  }

  record(name: string, state: BackendState): void {
    if (!this.#current.has(name)) throw new Error(`unknown backend ${name}`);
    this.#current.set(name, state);
    if (state === "SERVING") this.#servedOnce.add(name);
  }

  /** The gateway is shutting down: readiness goes so the endpoints drop it. */
  stop(): void {
    this.#stopping = true;
  }

  /** Whether a backend is serving now. */
  serving(name: string): boolean {
    return this.#current.get(name) === "SERVING";
  }

  view(): HealthView {
    const services = Object.fromEntries(this.#current);
    const started = this.required.every((name) => this.#servedOnce.has(name));
    const allServing = this.names.every((name) => this.serving(name));
    if (this.#stopping) return { ready: false, status: "stopping", services };
    if (!started) return { ready: false, status: "unavailable", services };
    return { ready: true, status: allServing ? "ok" : "degraded", services };
  }
}

export function healthz(states: BackendStates): Response {
  const { ready, status, services } = states.view();
  return json(ready ? 200 : 503, { status, services }, { "cache-control": "no-store" });
}

export function livez(): Response {
  return json(200, { status: "ok" }, { "cache-control": "no-store" });
}

export interface PollOptions {
  /** Between two rounds of checks. */
  intervalMs: number;
  /** The deadline of one check; a backend slower than this is UNREACHABLE. */
  timeoutMs: number;
}

export const DEFAULT_POLL: PollOptions = { intervalMs: 2000, timeoutMs: 1000 };

const backendServing = meter.createObservableGauge("crm.gateway.backend.serving", {
  description: "1 while the backend answers its gRPC health check SERVING, else 0",
  unit: "{backend}",
});

/**
 * Checks every backend's health in the background, one round every
 * intervalMs, and records the answers in the states. `ready` resolves after
 * the first round, so a gateway that starts beside running backends is ready
 * when it listens.
 */
export class BackendPoller {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly ready: Promise<void>;
  readonly #observe = (result: ObservableResult) => {
    for (const name of this.states.names) {
      result.observe(this.states.serving(name) ? 1 : 0, { "crm.backend": name });
    }
  };

  constructor(
    readonly clients: HealthClients,
    readonly states: BackendStates,
    readonly options: PollOptions = DEFAULT_POLL,
  ) {
    backendServing.addCallback(this.#observe);
    this.ready = this.#round();
  }

  async #round(): Promise<void> {
    await Promise.all(
      Object.entries(this.clients).map(async ([name, client]) => {
        let state: BackendState;
        try {
          const { status } = await client.check({ service: "" }, {
            timeoutMs: this.options.timeoutMs,
          });
          state = (ServingStatus[status] ?? "UNKNOWN") as BackendState;
        } catch {
          state = "UNREACHABLE";
        }
        if (!this.#closed) this.states.record(name, state);
      }),
    );
    if (!this.#closed) {
      this.#timer = setTimeout(() => void this.#round(), this.options.intervalMs);
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    backendServing.removeCallback(this.#observe);
  }
}
