/**
 * The gateway's second thread inside `deno task start` (a Worker with its
 * own isolate and event loop): a whole gateway listening on the main
 * thread's port with SO_REUSEPORT, so the kernel hands each new connection to
 * one of the two and the gateway's HTTP work gets a core of its own. Only
 * with GATEWAY_THREAD=on: on two cores it gained nothing, as the gateway's
 * thread was not full (durable ingest waits on its commits, and the content
 * benchmark's load generator shares the cores; docs/benchmarks.md, "the
 * gateway on two threads"); it is for machines with cores to spare.
 *
 * It is a gateway like any other replica, with what one process's gateways
 * must share handed over from the main thread through MessagePorts:
 * - ingest-service's calls go to the ingest thread's handlers directly
 *   (ingest_thread.ts `callPort`), as the main thread's do;
 * - without Redis, the rate-limit windows are the main thread's
 *   (rate_limit/port_counter.ts), so limits stay exact, and the bus's
 *   messages (keys revoked, content changed) are forwarded from the main
 *   thread, where auth and content publish them (lib/bus.ts `forwardBus`);
 *   with Redis the thread counts and subscribes there itself, as another
 *   process would, and while Redis is away both threads count in the main
 *   thread's windows (exact for the process, as without Redis).
 * Its own are its caches (keys, answers) and its batcher.
 */
import type { Config } from "../lib/config.ts";
import { createLogger } from "../lib/log.ts";
import { openPlatform, type Platform } from "../lib/platform.ts";
import type { Clock } from "../lib/clock.ts";
import { type Bus, createForwardedBus, forwardBus } from "../lib/bus.ts";
import { portTransport } from "../lib/rpc/port_transport.ts";
import {
  type GatewayListen,
  INGEST_TIMEOUT_MS,
  type RunningGateway,
  startGateway,
} from "../gateway/main.ts";
import type { LocalCounter } from "../gateway/rate_limit/counter.ts";
import { PortCounter, serveCounter } from "../gateway/rate_limit/port_counter.ts";
import {
  failureReply,
  inWorker,
  startOnPlatform,
  startThread,
  type ThreadReply,
} from "./thread.ts";

interface Ports {
  /** Calls to ingest-service's handlers (the ingest thread's `callPort`). */
  ingest: MessagePort;
  /** The main thread's rate-limit windows (with Redis, while it is away). */
  counter: MessagePort;
  /** The main thread's bus messages (used without Redis). */
  bus: MessagePort;
}

type ToWorker =
  | { type: "start"; config: Config; listen: GatewayListen; demoSiteKey?: string; ports: Ports }
  | { type: "close" };

export interface GatewayThreadOptions {
  /** The port the main thread's gateway listens on, with SO_REUSEPORT. */
  listen: GatewayListen & { reusePort: true };
  demoSiteKey?: string;
  /** The main thread's bus and windows, and its clock for the windows. */
  bus: Bus;
  counter: LocalCounter;
  clock: Clock;
  /** A port to ingest-service's handlers on its thread. */
  ingestPort: MessagePort;
}

export interface RunningGatewayThread {
  close(): Promise<void>;
}

/** Starts the second gateway; resolves once it listens. */
export async function startGatewayThread(
  config: Config,
  options: GatewayThreadOptions,
): Promise<RunningGatewayThread> {
  const counter = new MessageChannel();
  const bus = new MessageChannel();
  const stopCounting = serveCounter(counter.port1, options.counter, options.clock);
  const stopForwarding = forwardBus(options.bus, bus.port1);
  const ports: Ports = { ingest: options.ingestPort, counter: counter.port2, bus: bus.port2 };
  const stopMain = () => {
    stopCounting();
    stopForwarding();
  };
  let thread;
  try {
    thread = await startThread(
      import.meta.url,
      "gateway",
      {
        type: "start",
        config,
        listen: options.listen,
        demoSiteKey: options.demoSiteKey,
        ports,
      } satisfies ToWorker,
      [ports.ingest, ports.counter, ports.bus],
    );
  } catch (error) {
    stopMain();
    throw error;
  }
  const { worker, ask } = thread;
  return {
    async close() {
      // Its requests in flight finish first: they may still count and call ingest.
      await ask({ type: "close" } satisfies ToWorker);
      stopMain();
      worker.terminate();
    },
  };
}

interface WorkerScope {
  postMessage(message: ThreadReply): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

/** The worker's side: the gateway and its platform, started and closed on request. */
function serveInWorker(scope: WorkerScope) {
  let running: { gateway: RunningGateway; platform: Platform; close(): void } | undefined;
  scope.onmessage = async (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type === "start") {
      const { config, ports } = message;
      const log = createLogger(config.logLevel);
      const counter = new PortCounter(ports.counter);
      const ingest = portTransport(ports.ingest, { timeoutMs: INGEST_TIMEOUT_MS });
      const closePorts = () => {
        counter.close();
        ingest.close("gateway closed");
      };
      try {
        // With Redis the thread subscribes there itself and the forwarded bus is not used.
        if (config.redisUrl) ports.bus.close();
        const platform = await openPlatform(config, {
          database: false,
          log,
          localBus: config.redisUrl ? undefined : createForwardedBus(ports.bus, log),
        });
        const started = await startOnPlatform(
          platform,
          () =>
            startGateway(platform, message.listen, {
              demoSiteKey: message.demoSiteKey,
              ingestTransport: ingest,
              // With Redis, the windows used while Redis is away.
              counter,
            }),
        );
        running = { gateway: started.running, platform, close: closePorts };
        scope.postMessage(started.reply);
      } catch (error) {
        closePorts();
        scope.postMessage(failureReply(error));
      }
    } else if (message.type === "close") {
      await running?.gateway.close();
      running?.close();
      await running?.platform.close();
      scope.postMessage({ type: "closed" });
    }
  };
}

if (inWorker) serveInWorker(globalThis as unknown as WorkerScope);
