/**
 * One trace per request, read back from a real Jaeger: the four services as
 * separate processes (deno task service NAME, as in a cluster) and then the
 * whole system in one process (deno task start), each exporting over
 * OTLP/HTTP. A content read and a server event are sent with a caller's
 * traceparent; the test asserts on what Jaeger stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { DATABASE_URL, REDIS_URL } from "./helpers/env.ts";
import {
  JAEGER,
  type Jaeger,
  type JaegerSpan,
  type JaegerTrace,
  newTraceparent,
  parentOf,
  serviceOf,
  startJaeger,
  tag,
} from "./helpers/jaeger.ts";
import {
  type RunningProcess,
  runningServices,
  runTask,
  startService,
  startTask,
} from "./helpers/process.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
/** The caller's address, sent as X-Forwarded-For; it must appear in no span. */
const CALLER_IP = "203.0.113.77";
const PORTS = { otlpHttp: 20018, otlpGrpc: 20017, query: 20086, queryGrpc: 20085, health: 20033 };

const EXPORT = {
  OTEL_BSP_SCHEDULE_DELAY: "200",
  OTEL_METRIC_EXPORT_INTERVAL: "1000",
  LOG_LEVEL: "error",
};

const kindOf = (span: JaegerSpan) => tag(span, "span.kind");
const isSql = (span: JaegerSpan) =>
  tag(span, "db.system.name") === "postgresql" || tag(span, "db.system") === "postgresql";
const isRedis = (span: JaegerSpan) => tag(span, "db.system") === "redis";

/** Every span hangs under the caller's span or another span of the trace. */
function expectNoOrphans(trace: JaegerTrace, callerSpanId: string) {
  const ids = new Set(trace.spans.map((s) => s.spanID));
  const orphans = trace.spans.filter((span) => {
    const parent = span.references.find((r) => r.refType === "CHILD_OF");
    return !parent || (parent.spanID !== callerSpanId && !ids.has(parent.spanID));
  });
  expect(orphans.map((s) => `${serviceOf(trace, s)} ${s.operationName}`)).toEqual([]);
  expect(trace.spans.filter((s) => s.references.some((r) => r.spanID === callerSpanId)))
    .toHaveLength(1);
}

/** No key, secret or caller address in any tag or event of the trace. */
function expectNothingSecret(trace: JaegerTrace) {
  const text = JSON.stringify(trace.spans.map((s) => [s.tags, s.logs]));
  expect(text).not.toContain(SITE_KEY);
  expect(text).not.toContain(SECRET_KEY);
  expect(text).not.toContain(CALLER_IP);
}

function names(trace: JaegerTrace, service: string): string[] {
  return trace.spans.filter((s) => serviceOf(trace, s) === service).map((s) => s.operationName);
}

/**
 * Reads a page and sends a server event through the gateway with a caller's
 * traceparent, and checks the two traces and the shared work they link to.
 */
async function checkTraces(jaeger: Jaeger, gatewayUrl: string, names_: ServiceNames) {
  const { gateway, auth, content, ingest } = names_;

  // A content read: gateway -> auth (key) -> content, with SQL and Redis below.
  const read = newTraceparent();
  const page = await fetch(`${gatewayUrl}/content/v1/pages/home?lang=en`, {
    headers: { "x-crm-key": SITE_KEY, traceparent: read.header, "x-forwarded-for": CALLER_IP },
  });
  expect(page.status).toBe(200);
  await page.body?.cancel();

  // The gateway's server span ends last, after every span under it.
  const fullRead = await jaeger.trace(
    read.traceId,
    (trace) => trace.spans.some((s) => s.references.some((r) => r.spanID === read.spanId)),
  );

  const root = fullRead.spans.find((s) =>
    s.operationName === "GET /content/v1/pages/:marker" && serviceOf(fullRead, s) === gateway
  );
  expect(root, names(fullRead, gateway).join(", ")).toBeDefined();
  expect(root!.references[0]?.spanID).toBe(read.spanId);
  expect(tag(root!, "http.route")).toBe("/content/v1/pages/:marker");
  expect(tag(root!, "crm.site.id")).toBe("demo");

  const getPageClient = fullRead.spans.find((s) =>
    s.operationName === "crm.content.v1.ContentService/GetPage" && kindOf(s) === "client"
  );
  const getPageServer = fullRead.spans.find((s) =>
    s.operationName === "crm.content.v1.ContentService/GetPage" && kindOf(s) === "server"
  );
  expect(getPageClient && serviceOf(fullRead, getPageClient)).toBe(gateway);
  expect(getPageServer && serviceOf(fullRead, getPageServer)).toBe(content);
  expect(tag(getPageServer!, "rpc.system")).toBe("connect_rpc");
  expect(tag(getPageServer!, "rpc.service")).toBe("crm.content.v1.ContentService");
  expect(tag(getPageServer!, "rpc.method")).toBe("GetPage");
  expect(tag(getPageServer!, "crm.site.id")).toBe("demo");
  // The server span hangs under the client span (through the runtime's fetch span, if any).
  let ancestor = parentOf(fullRead, getPageServer!);
  while (ancestor && ancestor.spanID !== getPageClient!.spanID) {
    ancestor = parentOf(fullRead, ancestor);
  }
  expect(ancestor?.spanID).toBe(getPageClient!.spanID);

  const authServer = fullRead.spans.filter((s) =>
    serviceOf(fullRead, s) === auth && kindOf(s) === "server" &&
    s.operationName.startsWith("crm.auth.v1.")
  );
  expect(authServer.length, names(fullRead, auth).join(", ")).toBeGreaterThan(0);

  const sql = fullRead.spans.filter(isSql);
  expect(sql.map((s) => serviceOf(fullRead, s))).toContain(content);
  for (const span of sql) {
    expect(tag(span, "db.query.text")).toBeTypeOf("string");
    expect(tag(span, "db.operation.name")).toBeTypeOf("string");
    expect(span.operationName).toMatch(/^[A-Z]+( [a-z_.]+)?$/);
  }
  const redis = fullRead.spans.filter(isRedis);
  expect(redis.length).toBeGreaterThan(0);
  expect(redis.map((s) => serviceOf(fullRead, s))).toContain(gateway);
  expectNoOrphans(fullRead, read.spanId);
  expectNothingSecret(fullRead);

  // A server event: its trace reaches the ingest RPC; the batch and the
  // group commit that stored it are traces of their own linking back.
  const event = newTraceparent();
  const sent = await fetch(`${gatewayUrl}/marketing/event`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-event-key": SECRET_KEY,
      traceparent: event.header,
      "x-forwarded-for": CALLER_IP,
    },
    body: JSON.stringify({
      name: "signup",
      event_id: crypto.randomUUID(),
      params: { plan: "pro", seats: 3 },
    }),
  });
  expect(await sent.json()).toEqual({ ok: true, duplicate: false });
  const eventTrace = await jaeger.trace(
    event.traceId,
    (trace) => trace.spans.some((s) => s.references.some((r) => r.spanID === event.spanId)),
  );
  const eventRoot = eventTrace.spans.find((s) => s.operationName === "POST /marketing/event");
  expect(eventRoot, names(eventTrace, gateway).join(", ")).toBeDefined();
  expect(tag(eventRoot!, "crm.site.id")).toBe("demo");
  expectNothingSecret(eventTrace);

  // The batch that carried the event links to the request's span.
  const linksTo = (span: JaegerSpan, trace: JaegerTrace) =>
    span.references.some((r) => r.traceID === trace.traceID && r.refType === "FOLLOWS_FROM");
  let batch: JaegerSpan | undefined;
  let batchTrace: JaegerTrace | undefined;
  await expect.poll(async () => {
    for (const trace of await jaeger.traces(gateway, "gateway ingest batch")) {
      const span = trace.spans.find((s) =>
        s.operationName === "gateway ingest batch" && linksTo(s, eventTrace)
      );
      if (span) [batch, batchTrace] = [span, trace];
    }
    return batch !== undefined;
  }, { timeout: 20_000, interval: 500 }).toBe(true);
  const ingestServer = batchTrace!.spans.find((s) =>
    s.operationName === "crm.ingest.v1.IngestService/Ingest" && kindOf(s) === "server"
  );
  expect(ingestServer && serviceOf(batchTrace!, ingestServer)).toBe(ingest);

  // The group commit that wrote it links to the ingest call, and holds the INSERTs.
  let commit: JaegerTrace | undefined;
  await expect.poll(async () => {
    for (const trace of await jaeger.traces(ingest, "ingest group commit")) {
      if (trace.spans.some((s) => linksTo(s, batchTrace!))) commit = trace;
    }
    return commit !== undefined;
  }, { timeout: 20_000, interval: 500 }).toBe(true);
  const inserts = commit!.spans.filter((s) => isSql(s) && tag(s, "db.operation.name") === "INSERT");
  expect(inserts.length).toBeGreaterThan(0);
}

interface ServiceNames {
  gateway: string;
  auth: string;
  content: string;
  ingest: string;
}

describe.runIf(DATABASE_URL && REDIS_URL && JAEGER)("traces in Jaeger", () => {
  let jaeger: Jaeger;
  let databaseUrl: string;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    jaeger = await startJaeger(PORTS);
    const fresh = await freshPostgresUrl();
    [databaseUrl, dropDatabase] = [fresh.url, fresh.drop];
  }, 60_000);

  afterAll(async () => {
    for (const running of runningServices) await running.stop();
    await jaeger?.stop();
    await dropDatabase?.();
  });

  it("follows a request across the four services run as separate processes", async () => {
    const env = {
      ...EXPORT,
      DATABASE_URL: databaseUrl,
      REDIS_URL: REDIS_URL!,
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    };
    const running: RunningProcess[] = [];
    try {
      for (const name of ["auth", "content", "ingest"] as const) {
        running.push(await startService(name, { ...env, GRPC_PORT: "0" }));
      }
      const [auth, content, ingest] = running;
      const urls = { AUTH_URL: auth.url, CONTENT_URL: content.url, INGEST_URL: ingest.url };
      const cli = { ...urls, DATABASE_URL: databaseUrl, REDIS_URL: REDIS_URL! };
      const migrated = await runTask(["admin", "migrate"], cli);
      expect(migrated.code, migrated.stderr).toBe(0);
      const imported = await runTask(
        ["admin", "import", "test/fixtures/contract-example.json"],
        cli,
      );
      expect(imported.code, imported.stderr).toBe(0);
      const gateway = await startService("gateway", {
        ...env,
        ...urls,
        PORT: "0",
        TRUST_PROXY: "1",
      });
      running.push(gateway);
      await checkTraces(jaeger, gateway.url, {
        gateway: "crm-gateway",
        auth: "crm-auth",
        content: "crm-content",
        ingest: "crm-ingest",
      });
    } finally {
      for (const process of running.reverse()) expect(await process.stop()).toBe(0);
    }
  }, 150_000);

  it("follows a request through deno task start (one process)", async () => {
    const system = await startTask(["--seed", "test/fixtures/contract-example.json"], {
      ...EXPORT,
      DATABASE_URL: databaseUrl,
      REDIS_URL: REDIS_URL!,
      TRUST_PROXY: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    }, { direct: true });
    try {
      await checkTraces(jaeger, system.url, {
        gateway: "crm",
        auth: "crm",
        content: "crm",
        ingest: "crm",
      });
    } finally {
      expect(await system.stop()).toBe(0);
    }
  }, 150_000);
});
