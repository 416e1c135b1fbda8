/**
 * Connect calls through a MessagePort (port_transport.ts): ingest-service's
 * real definition answered through it, errors (codes, typed details,
 * unexpected exceptions) arriving exactly as through Connect's in-memory
 * router transport, deadlines and cancellation reaching the handler, an
 * unknown method, a closed transport, and bodies transferred, not copied.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  createConnectRouter,
  createRouterTransport,
  type HandlerContext,
} from "@connectrpc/connect";
import {
  type IngestItemSchema,
  IngestService,
  Outcome,
  Source,
} from "../gen/crm/ingest/v1/ingest_pb.ts";
import { SiteAdminService } from "../gen/crm/admin/v1/site_admin_pb.ts";
import { ManualClock } from "../clock.ts";
import { createLogger } from "../log.ts";
import { fieldProblem, publicError, reasonOf } from "../errors.ts";
import { clientInterceptors, serverInterceptors } from "./interceptors.ts";
import { type PortLike, portTransport, servePort } from "./port_transport.ts";
import { type InMemoryService, inMemoryService } from "../../../test/helpers/in_memory.ts";
import { readFixture } from "../../../test/helpers/system.ts";
import { eventOf } from "../../gateway/ingest_body.ts";
import { ingestService } from "../../ingest/main.ts";

type Item = MessageInitShape<typeof IngestItemSchema>;
const quiet = createLogger("error", {}, () => {});

/** Both ends of a fresh channel; closed after each test. */
const opened: (() => void)[] = [];
function connect(router: ConnectRouter, options: { timeoutMs?: number; adminToken?: string } = {}) {
  const channel = new MessageChannel();
  const stop = servePort(channel.port2, router.handlers);
  const transport = portTransport(channel.port1, options);
  opened.push(() => {
    transport.close();
    stop();
  });
  return transport;
}
afterEach(() => {
  for (const close of opened.splice(0)) close();
});

/** What a call's failure looks like to the caller: code, message, typed detail. */
function failureOf(error: unknown) {
  const e = ConnectError.from(error);
  return {
    code: Code[e.code],
    message: e.rawMessage,
    reason: reasonOf(e)?.reason,
    fields: reasonOf(e)?.fields,
  };
}
const failure = (call: Promise<unknown>) =>
  call.then(() => {
    throw new Error("the call succeeded");
  }, failureOf);

describe("ingest-service's real definition through a MessagePort", () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  let service: InMemoryService;
  let ingest: Client<typeof IngestService>;

  const event = (json: Record<string, unknown>): Item => ({
    source: Source.SERVER,
    siteId: "demo",
    receivedAtMs: BigInt(clock.now()),
    clientIp: "203.0.113.9",
    userAgent: "curl/8",
    body: { case: "event", value: eventOf(json) },
  });

  beforeAll(async () => {
    service = await inMemoryService(ingestService, { clock, env: { ADMIN_TOKEN: "t0k" } });
    const manifest = await readFixture("contract-example.json");
    await service.client(SiteAdminService, { adminToken: "t0k" })
      .importSite({ manifestJson: JSON.stringify(manifest) });
  });
  afterAll(async () => {
    await service?.close();
  });
  it("answers a batch item by item, as through the in-memory router transport", async () => {
    ingest = createClient(IngestService, connect(service.router()));
    const items = [
      event({ name: "signup", id: "port-1", vid: "vis-9", p: { plan: "pro" } }),
      event({ name: "signup", id: "port-1", vid: "vis-9" }),
      event({ name: "never_declared", id: "port-2" }),
      event({ name: "signup", id: "port-3", value: -1 }),
    ];
    const { results } = await ingest.ingest({ items });
    expect(results.map((r) => Outcome[r.outcome])).toEqual([
      "STORED",
      "DUPLICATE",
      "REFUSED",
      "REFUSED",
    ]);
    expect([results[2].code, results[2].error?.reason]).toEqual([
      Code.InvalidArgument,
      "unknown_event",
    ]);
    expect(results[3].error?.reason).toBe("invalid_body");
    // Stored for real: the in-memory transport sees the same event as a duplicate.
    const again = await service.client(IngestService).ingest({ items: [items[0]] });
    expect(again.results.map((r) => Outcome[r.outcome])).toEqual(["DUPLICATE"]);
  });

  it("passes the admin token and refuses without it, with the same typed error", async () => {
    const site = createClient(SiteAdminService, connect(service.router()));
    const viaPort = await failure(site.exportSite({ siteId: "demo" }));
    const viaRouter = await failure(
      service.client(SiteAdminService).exportSite({ siteId: "demo" }),
    );
    expect(viaPort).toEqual(viaRouter);
    expect(viaPort.code).toBe("Unauthenticated");
    const admitted = createClient(
      SiteAdminService,
      connect(service.router(), { adminToken: "t0k" }),
    );
    expect(JSON.parse((await admitted.exportSite({ siteId: "demo" })).manifestJson).site)
      .toEqual({ timeZone: "Europe/Berlin" });
  });
});

describe("errors, deadlines and cancellation through a MessagePort", () => {
  /** An IngestService whose one method is `ingest`, behind the real server interceptors. */
  function routerOf(ingest: (context: HandlerContext) => Promise<never> | never) {
    const routes = (router: ConnectRouter) =>
      router.service(IngestService, { ingest: (_request, context) => ingest(context) });
    const router = createConnectRouter({ interceptors: serverInterceptors({ log: quiet }) });
    routes(router);
    const inMemory = createClient(
      IngestService,
      createRouterTransport(routes, {
        router: { interceptors: serverInterceptors({ log: quiet }) },
        transport: { interceptors: clientInterceptors({}) },
      }),
    );
    return { router, inMemory };
  }

  it("delivers a refusal's code, message and typed detail as the in-memory transport does", async () => {
    const { router, inMemory } = routerOf(() => {
      throw publicError(
        Code.ResourceExhausted,
        "too_many_items",
        fieldProblem("items", "over 5000"),
      );
    });
    const viaPort = await failure(createClient(IngestService, connect(router)).ingest({}));
    expect(viaPort).toEqual(await failure(inMemory.ingest({})));
    expect(viaPort).toMatchObject({
      code: "ResourceExhausted",
      reason: "too_many_items",
      fields: { field: "items" },
    });
  });

  it("turns an unexpected exception into a plain INTERNAL error, no message leaking", async () => {
    const { router, inMemory } = routerOf(() => {
      throw new Error("relation ingest.secret does not exist");
    });
    const viaPort = await failure(createClient(IngestService, connect(router)).ingest({}));
    expect(viaPort).toEqual(await failure(inMemory.ingest({})));
    expect(viaPort).toMatchObject({ code: "Internal", message: "internal error" });
  });

  /** A handler that answers only when its call is given up on, and tells when it ran and how it ended. */
  function waitingRouter() {
    let entered!: () => void;
    const started = new Promise<void>((r) => entered = r);
    let seen!: (what: { timeoutHeader: string | null; reason: unknown }) => void;
    const ended = new Promise<{ timeoutHeader: string | null; reason: unknown }>((r) => seen = r);
    const { router } = routerOf((context) =>
      new Promise<never>((_, reject) => {
        const end = () => {
          seen({
            timeoutHeader: context.requestHeader.get("connect-timeout-ms"),
            reason: context.signal.reason,
          });
          reject(context.signal.reason);
        };
        if (context.signal.aborted) end();
        else context.signal.addEventListener("abort", end);
        entered();
      })
    );
    return { router, started, ended };
  }

  it("fails a call past its deadline with DEADLINE_EXCEEDED and ends the handler's call", async () => {
    const { router, ended } = waitingRouter();
    const client = createClient(IngestService, connect(router, { timeoutMs: 10_000 }));
    const call = failure(client.ingest({}, { timeoutMs: 5 }));
    expect((await call).code).toBe("DeadlineExceeded");
    // The deadline travelled with the call, and the handler's signal fired.
    expect((await ended).timeoutHeader).toBe("5");
  });

  it("fails a cancelled call with CANCELED and aborts the handler", async () => {
    const { router, started, ended } = waitingRouter();
    const client = createClient(IngestService, connect(router));
    const abort = new AbortController();
    const call = failure(client.ingest({}, { signal: abort.signal }));
    await started;
    abort.abort();
    expect((await call).code).toBe("Canceled");
    expect((await ended).reason).toBeInstanceOf(Error);
  });

  it("answers a method the other side does not serve with UNIMPLEMENTED, as HTTP's 404", async () => {
    const client = createClient(IngestService, connect(createConnectRouter()));
    expect((await failure(client.ingest({}))).code).toBe("Unimplemented");
  });

  it("fails calls in flight and later calls with UNAVAILABLE once closed", async () => {
    const { router } = waitingRouter();
    const channel = new MessageChannel();
    const stop = servePort(channel.port2, router.handlers);
    const transport = portTransport(channel.port1);
    const client = createClient(IngestService, transport);
    const inFlight = failure(client.ingest({}));
    transport.close("ingest-service closed");
    expect(await inFlight).toMatchObject({ code: "Unavailable", message: "ingest-service closed" });
    expect(await failure(client.ingest({}))).toMatchObject({ code: "Unavailable" });
    stop();
  });

  it("transfers each body's buffer instead of copying it", async () => {
    const { router } = routerOf(() => {
      throw new ConnectError("no", Code.NotFound);
    });
    const channel = new MessageChannel();
    const stop = servePort(channel.port2, router.handlers);
    const sent: { transfer: Transferable[]; body: Uint8Array }[] = [];
    const recording: PortLike = {
      postMessage(message, transfer) {
        const body = (message as { body?: Uint8Array }).body;
        if (body) sent.push({ transfer, body });
        channel.port1.postMessage(message, transfer);
      },
      get onmessage() {
        return channel.port1.onmessage;
      },
      set onmessage(handler) {
        channel.port1.onmessage = handler;
      },
      close: () => channel.port1.close(),
    };
    const transport = portTransport(recording);
    const client = createClient(IngestService, transport);
    await failure(client.ingest({ items: [{ siteId: "demo" }] }));
    expect(sent).toHaveLength(1);
    expect(sent[0].transfer).toEqual([sent[0].body.buffer]);
    // Detached by the transfer: the bytes moved to the other side.
    expect(sent[0].body.byteLength).toBe(0);
    transport.close();
    stop();
  });
});
