/**
 * `deno run -A test/bench/ingest_call.ts`: the CPU one IngestService call
 * costs between the gateway's thread and the ingest thread, HTTP/1.1 over
 * loopback (the services' own client and server) against the MessagePort
 * transport (services/lib/rpc/port_transport.ts), without the rest of the
 * system. A Worker serves a stub IngestService (every item STORED) through the
 * real server interceptors on both; this thread sends the same batches of
 * typed events (the ingest benchmark's, `BATCH_ITEMS` a call, `IN_FLIGHT`
 * calls at once, as the gateway's batcher) through each, in turns, and
 * reports the process's CPU (both threads) per call and per item.
 */
import { createClient } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type IngestItemSchema,
  IngestService,
  Outcome,
  Source,
} from "../../services/lib/gen/crm/ingest/v1/ingest_pb.ts";
import { createLogger } from "../../services/lib/log.ts";
import { serverInterceptors } from "../../services/lib/rpc/interceptors.ts";
import { HealthRegistry } from "../../services/lib/rpc/health.ts";
import { startRpcServer } from "../../services/lib/rpc/server.ts";
import { serviceClient } from "../../services/lib/rpc/client.ts";
import { portTransport, servePort } from "../../services/lib/rpc/port_transport.ts";
import { eventOf } from "../../services/gateway/ingest_body.ts";
import { cpuMicros } from "./measure.ts";

const BATCH_ITEMS = Number(Deno.env.get("BATCH_ITEMS") ?? 55);
const IN_FLIGHT = Number(Deno.env.get("IN_FLIGHT") ?? 8);
const CALLS = Number(Deno.env.get("CALLS") ?? 2_000);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
/** Which transports to run: http,port (both, in turns) by default. */
const MODES = (Deno.env.get("MODES") ?? "http,port").split(",") as ("http" | "port")[];

const inWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
  "undefined";

if (inWorker) {
  const scope = globalThis as unknown as {
    postMessage(m: unknown): void;
    onmessage: ((e: MessageEvent) => void) | null;
  };
  const server = await startRpcServer({
    services: [IngestService],
    routes: (router) =>
      router.service(IngestService, {
        ingest: (request) => ({
          results: request.items.map(() => ({ outcome: Outcome.STORED })),
        }),
      }),
    interceptors: serverInterceptors({ log: createLogger("error", {}, () => {}) }),
    health: new HealthRegistry(),
    host: "127.0.0.1",
    port: 0,
  });
  scope.onmessage = (event) => servePort(event.data as MessagePort, server.handlers);
  scope.postMessage(server.url);
} else {
  const worker = new Worker(import.meta.url, { type: "module" });
  const url = await new Promise<string>((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
  });
  const channel = new MessageChannel();
  worker.postMessage(channel.port2, [channel.port2]);
  const clients = {
    http: serviceClient(IngestService, url, { timeoutMs: 10_000 }),
    port: createClient(IngestService, portTransport(channel.port1, { timeoutMs: 10_000 })),
  };
  const batch = (call: number): MessageInitShape<typeof IngestItemSchema>[] =>
    Array.from({ length: BATCH_ITEMS }, (_, i) => ({
      source: Source.SERVER,
      siteId: "demo",
      receivedAtMs: BigInt(Date.now()),
      clientIp: "127.0.0.1",
      userAgent: "Deno/2.9.6",
      body: {
        case: "event",
        value: eventOf({
          name: "purchase",
          event_id: `r-${call}-${i}`,
          visitor_id: `v-${i % 5000}`,
          params: { product: "beans", quantity: (i % 7) + 1 },
          value: 1299,
          url: "https://demo.example/checkout/thanks",
        }),
      },
    }));
  // Built once: the calls measure the transport, not the gateway's mapping of a body.
  const batches = Array.from({ length: 16 }, (_, i) => batch(i));
  const run = async (client: typeof clients.http) => {
    let next = 0;
    let failed = 0;
    let firstFailure = "";
    const cpu = cpuMicros([Deno.pid]);
    const started = performance.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CALLS) {
        try {
          const { results } = await client.ingest({ items: batches[next++ % batches.length] });
          if (results.length !== BATCH_ITEMS) throw new Error("wrong answer");
        } catch (error) {
          failed++;
          firstFailure ||= String(error);
        }
      }
    }));
    const cpuUs = cpuMicros([Deno.pid]) - cpu;
    const ms = performance.now() - started;
    return {
      cpuUsPerCall: Math.round(cpuUs / CALLS),
      cpuUsPerItem: Math.round((cpuUs / CALLS / BATCH_ITEMS) * 10) / 10,
      callsPerS: Math.round(CALLS / (ms / 1000)),
      failed,
      firstFailure,
    };
  };
  // Warm both, then alternate.
  for (const mode of MODES) await run(clients[mode]);
  const rows = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of MODES) {
      rows.push({ round, mode, ...(await run(clients[mode])) });
    }
  }
  console.log(`${BATCH_ITEMS} items a call, ${IN_FLIGHT} in flight, ${CALLS} calls a run`);
  console.table(rows);
  worker.terminate();
  Deno.exit(0);
}
