/**
 * ingest-service on a thread of its own inside `deno task start` (a Worker:
 * its own JavaScript isolate and event loop), so the gateway and the write
 * path each get a core instead of sharing one. It is the same service as in
 * a cluster: its own storage pool, reached over Connect on its port like
 * every other service. Only with Postgres: embedded PGlite lives in the main
 * thread's memory and cannot be shared.
 *
 * The gateway in the same process does not go through that port for its
 * `IngestService` calls: `startIngestThread` also answers a Connect transport
 * over a MessagePort to the worker (rpc/port_transport.ts), whose calls the
 * worker hands to the same handlers its port serves. The port still serves
 * everything else (the admin command line, health, other callers).
 *
 * The main thread's side is `startIngestThread`; the worker's side runs when
 * this module is a worker's entry (it then receives a "start" message).
 */
import type { Config } from "../lib/config.ts";
import { createLogger } from "../lib/log.ts";
import { openPlatform, type Platform } from "../lib/platform.ts";
import type { ListenOptions, RunningService } from "../lib/service_runtime.ts";
import { type PortTransport, portTransport, servePort } from "../lib/rpc/port_transport.ts";
import type { TransportOptions } from "../lib/rpc/client.ts";
import { startIngestService } from "../ingest/main.ts";
import {
  failureReply,
  inWorker,
  startOnPlatform,
  startThread,
  type ThreadReply,
} from "./thread.ts";

type ToWorker =
  | { type: "start"; config: Config; listen: ListenOptions }
  /** Answer calls through this port (no reply). */
  | { type: "serve"; calls: MessagePort }
  | { type: "close" };

export interface RunningIngestThread extends RunningService {
  /**
   * A Connect transport to the worker's handlers through a MessagePort, for
   * callers in this process; closed with the service.
   */
  transport(options?: TransportOptions): PortTransport;
  /**
   * A port whose calls the worker answers, for a caller on another thread
   * (the gateway's second thread wraps it in `portTransport`); that caller closes it.
   */
  callPort(): MessagePort;
}

/** Starts ingest-service in a worker; resolves once it listens (migrated when asked). */
export async function startIngestThread(
  config: Config,
  listen: ListenOptions,
): Promise<RunningIngestThread> {
  const { worker, started, ask } = await startThread(
    import.meta.url,
    "ingest-service",
    { type: "start", config, listen } satisfies ToWorker,
  );
  const transports: PortTransport[] = [];
  const callPort = () => {
    const channel = new MessageChannel();
    worker.postMessage({ type: "serve", calls: channel.port2 } satisfies ToWorker, [
      channel.port2,
    ]);
    return channel.port1;
  };
  return {
    name: "ingest",
    url: started.url,
    port: started.port,
    transport(options = {}) {
      const transport = portTransport(callPort(), options);
      transports.push(transport);
      return transport;
    },
    callPort,
    async close() {
      await ask({ type: "close" } satisfies ToWorker);
      for (const transport of transports) transport.close("ingest-service closed");
      worker.terminate();
    },
  };
}

/** What this module needs of a worker's global scope. */
interface WorkerScope {
  postMessage(message: ThreadReply): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

/** The worker's side: one service and its platform, started and closed on request. */
function serveInWorker(scope: WorkerScope) {
  let running: { service: RunningService; platform: Platform } | undefined;
  /** Stops answering each port's calls. */
  const ports: (() => void)[] = [];
  scope.onmessage = async (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type === "start") {
      try {
        const config = message.config;
        const platform = await openPlatform(config, {
          database: true,
          log: createLogger(config.logLevel),
        });
        const started = await startOnPlatform(
          platform,
          () => startIngestService(platform, message.listen),
        );
        running = { service: started.running, platform };
        scope.postMessage(started.reply);
      } catch (error) {
        scope.postMessage(failureReply(error));
      }
    } else if (message.type === "serve") {
      // Sent only after "started": the service and its handlers exist.
      ports.push(servePort(message.calls, running?.service.handlers ?? []));
    } else if (message.type === "close") {
      for (const stop of ports.splice(0)) stop();
      await running?.service.close();
      await running?.platform.close();
      scope.postMessage({ type: "closed" });
    }
  };
}

if (inWorker) serveInWorker(globalThis as unknown as WorkerScope);
