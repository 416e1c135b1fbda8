/**
 * grpc.health.v1 for every service: per-service status, with the overall
 * status ("") SERVING only when every registered service is; and
 * LIVENESS_SERVICE, SERVING whenever the process answers at all.
 */
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
} from "../gen/grpc/health/v1/health_pb.ts";

export { ServingStatus };

/**
 * The health service name a liveness probe asks about: always SERVING, so
 * an answer says only that the process's event loop runs. A stuck loop (or
 * a stopped process) gives no answer and fails the probe; an outage of a
 * backend (Postgres down) makes the service's own status NOT_SERVING, which
 * takes it out of the load balancer (readiness) and never restarts it.
 */
export const LIVENESS_SERVICE = "liveness";

export class HealthRegistry {
  #statuses = new Map<string, ServingStatus>();
  #waiters = new Set<() => void>();

  /** Registers a service (initially NOT_SERVING) or changes its status. */
  set(service: string, status: ServingStatus): void {
    if (this.#statuses.get(service) === status) return;
    this.#statuses.set(service, status);
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  setAll(status: ServingStatus): void {
    for (const service of this.#statuses.keys()) this.set(service, status);
  }

  /** The status of one service; "" is the whole server. Undefined when unknown. */
  get(service: string): ServingStatus | undefined {
    if (service === LIVENESS_SERVICE) return ServingStatus.SERVING;
    if (service !== "") return this.#statuses.get(service);
    if (this.#statuses.size === 0) return ServingStatus.NOT_SERVING;
    for (const status of this.#statuses.values()) {
      if (status !== ServingStatus.SERVING) return ServingStatus.NOT_SERVING;
    }
    return ServingStatus.SERVING;
  }

  services(): string[] {
    return [...this.#statuses.keys()];
  }

  /** Resolves at the next status change, or when the signal aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener("abort", wake);
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }
}

export function healthService(registry: HealthRegistry): ServiceImpl<typeof Health> {
  return {
    check(request) {
      const status = registry.get(request.service);
      if (status === undefined) {
        throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      }
      return { status };
    },
    list() {
      const statuses: Record<string, ReturnType<typeof create<typeof HealthCheckResponseSchema>>> =
        {};
      for (const name of ["", ...registry.services()]) {
        statuses[name] = create(HealthCheckResponseSchema, { status: registry.get(name) });
      }
      return { statuses };
    },
    async *watch(request, context: HandlerContext) {
      let last: ServingStatus | undefined;
      while (!context.signal.aborted) {
        const status = registry.get(request.service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (status !== last) {
          yield { status };
          last = status;
        }
        await registry.changed(context.signal);
      }
    },
  };
}
