/** gateway wiring: service clients, caches, limiter, routes, the HTTP server. */
import { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { ContentService } from "../lib/gen/crm/content/v1/content_pb.ts";
import { IngestService, type ItemResult } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { Health } from "../lib/gen/grpc/health/v1/health_pb.ts";
import type { Platform } from "../lib/platform.ts";
import { serviceClient } from "../lib/rpc/client.ts";
import { Callers } from "./callers.ts";
import { ShareCallers } from "./share_callers.ts";
import { sharePage } from "./share_page.ts";
import { contentApi } from "./content_api.ts";
import { LocalCounter } from "./rate_limit/counter.ts";
import { ResilientCounter } from "./rate_limit/resilient_counter.ts";
import { RateLimiter } from "./rate_limit/policy.ts";
import { ResponseCache } from "./response_cache.ts";
import { gatewayHandler } from "./server.ts";
import { assetHandler, staticAsset } from "./static_asset.ts";
import { demoPage } from "./demo_page.ts";
import { WIDGET_OUTPUT } from "../../widget/build.ts";
import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "../../dashboard/build.ts";
import { dashboardApp } from "./dashboard.ts";
import { Batcher } from "./batcher.ts";
import { type IngestItemInit, marketingApi } from "./marketing_api.ts";
import { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { statsApi } from "./stats_api.ts";
import { BackendPoller, BackendStates, healthz, livez } from "./health.ts";
import { openApiHandler } from "./openapi/serve.ts";
import { reportServiceUp, untraced } from "../lib/telemetry.ts";

/** Calls to ingest-service in flight at once, and requests allowed to wait for one. */
const INGEST_IN_FLIGHT = 8;
const INGEST_MAX_WAITING = 50_000;
/** Deadline of an ingest call (ingest-service's group commit gives up after 3 s). */
export const INGEST_TIMEOUT_MS = 10_000;
/**
 * Beyond REPORT_TIMEOUT_MS, the stats call's deadline: ingest-service answers
 * `timeout` itself at REPORT_TIMEOUT_MS, and this leaves its answer time to
 * arrive (and the site lookup before the report's snapshot).
 */
export const STATS_DEADLINE_MARGIN_MS = 2_000;
/** Stays well under ingest-service's 4 MB message limit. */
const INGEST_BATCH_BYTES = 2 * 1024 * 1024;

export interface RunningGateway {
  url: string;
  /** The port listened on (the one asked for, or the one the system chose for 0). */
  port: number;
  close(): Promise<void>;
}

export interface GatewayListen {
  host: string;
  port: number;
}

export interface GatewayExtras {
  /** Serve the demo site's page at /demo/ with this site key (deno task start). */
  demoSiteKey?: string;
}

/**
 * The built widget. The gateway only serves it: `deno task widget` builds it
 * (so do `start` and `test` before they run, and the image build).
 */
export function readBuiltWidget(file: URL = WIDGET_OUTPUT): Promise<Uint8Array> {
  return readBuilt(file, "the widget");
}

async function readBuilt(file: URL, what: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new Error(`${file.pathname} is missing: build ${what} with \`deno task widget\``);
  }
}

export async function startGateway(
  platform: Platform,
  listen: GatewayListen,
  extras: GatewayExtras = {},
): Promise<RunningGateway> {
  const { config, log, bus, clock } = platform;
  const widget = staticAsset(
    await readBuiltWidget(),
    "application/javascript; charset=utf-8",
  );
  const auth = serviceClient(AuthService, config.authUrl, { timeoutMs: 5000 });
  const content = serviceClient(ContentService, config.contentUrl, { timeoutMs: 5000 });
  const ingest = serviceClient(IngestService, config.ingestUrl, { timeoutMs: INGEST_TIMEOUT_MS });
  const stats = serviceClient(StatsService, config.ingestUrl, {
    timeoutMs: config.pools.reportTimeoutMs + STATS_DEADLINE_MARGIN_MS,
  });
  const batcher = new Batcher<IngestItemInit, ItemResult>(
    async (items) => (await ingest.ingest({ items })).results,
    {
      maxItems: config.ingestBatch.maxItems,
      maxWaitMs: config.ingestBatch.maxWaitMs,
      maxInFlight: INGEST_IN_FLIGHT,
      maxQueued: INGEST_MAX_WAITING,
      maxBytes: INGEST_BATCH_BYTES,
    },
  );
  const healthClients = {
    auth: serviceClient(Health, config.authUrl),
    content: serviceClient(Health, config.contentUrl),
    ingest: serviceClient(Health, config.ingestUrl),
  };
  // Ready once auth has served: without keys nothing can be answered; the others only degrade it.
  const health = new BackendStates(Object.keys(healthClients), ["auth"]);
  // Checks run in the background and outside any trace; the first round
  // ends before the gateway listens, so beside running backends it is ready at once.
  const poller = untraced(() => new BackendPoller(healthClients, health));
  await poller.ready;
  const counter = platform.redis
    ? new ResilientCounter(platform.redis, config.redisKeyPrefix, log)
    : new LocalCounter();
  const limiter = new RateLimiter(counter, config.limits);
  const callers = new Callers(auth, { bus, clock, keyCacheTtlS: config.keyCacheTtlS });
  const shares = new ShareCallers(auth, { bus, clock, keyCacheTtlS: config.keyCacheTtlS });
  const answers = new ResponseCache(bus, clock, config.responseCacheMaxBytes);
  const handler = gatewayHandler({
    config,
    log,
    handlers: {
      ...contentApi({
        content,
        callers,
        limiter,
        cache: answers,
        log,
        clock,
        // A CDN copy answers without asking us, so it must not outlive the
        // promise that a revoked key is refused everywhere within KEY_CACHE_TTL_S.
        cdnMaxAgeS: Math.min(config.contentCdnMaxAgeS, config.keyCacheTtlS),
      }),
      widget: assetHandler(widget),
      demo: extras.demoSiteKey ? await demoPage(extras.demoSiteKey) : undefined,
      ...marketingApi({
        batcher,
        callers,
        limiter,
        log,
        clock,
        bodyTimeoutMs: config.http.bodyTimeoutMs,
      }),
      ...statsApi({
        stats,
        callers,
        shares,
        limiter,
        log,
        clock,
        bodyTimeoutMs: config.http.bodyTimeoutMs,
      }),
      ...dashboardApp(
        await readBuilt(DASHBOARD_SCRIPT, "the dashboard"),
        await readBuilt(DASHBOARD_STYLE, "the dashboard"),
      ),
      sharePage: sharePage({ shares }),
      healthz: () => healthz(health),
      livez,
      openApi: openApiHandler(),
    },
  });
  const server = Deno.serve(
    {
      hostname: listen.host,
      port: listen.port,
      onListen: () => {},
    },
    handler,
  );
  const shownHost = listen.host === "0.0.0.0" ? "127.0.0.1" : listen.host;
  const up = reportServiceUp("gateway");
  return {
    url: `http://${shownHost}:${server.addr.port}`,
    port: server.addr.port,
    async close() {
      up();
      health.stop();
      poller.close();
      // Stops accepting and waits for the requests in flight (their batches included).
      const shutdown = server.shutdown();
      await batcher.close();
      await shutdown;
      callers.close();
      shares.close();
      answers.close();
    },
  };
}
