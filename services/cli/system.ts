/**
 * The whole system in one process: auth, content and ingest each on its own
 * loopback port and the gateway in front, talking Connect/gRPC exactly as in
 * a cluster. Used by `deno task start` and by the integration tests.
 */
import type { Config } from "../lib/config.ts";
import { createLogger, type Logger } from "../lib/log.ts";
import type { Clock } from "../lib/clock.ts";
import { openPlatform, type Platform } from "../lib/platform.ts";
import type { RunningService } from "../lib/service_runtime.ts";
import { portOf } from "../lib/config.ts";
import { startAuthService } from "../auth/main.ts";
import { startContentService } from "../content/main.ts";
import { type IngestOptions, startIngestService } from "../ingest/main.ts";
import { type RunningGateway, startGateway } from "../gateway/main.ts";
import { type AdminClients, adminClients } from "./admin_clients.ts";
import { importManifest, type ImportReport } from "./site_manifest.ts";
import { serviceClient } from "../lib/rpc/client.ts";
import { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { IngestService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { loadDemoHistory } from "./demo_history.ts";

export interface SystemOptions {
  log?: Logger;
  /** Manifest JSON to import (upsert) before serving. */
  seed?: string;
  /** Load the bundled demo site when storage holds no site and no seed is given. */
  demo?: boolean;
  /** Serve the demo page at /demo/ when the bundled demo site is present. */
  demoPage?: boolean;
  /** The clock of every service and the gateway (the system clock by default). */
  clock?: Clock;
  /** ingest-service's in-process options (a benchmark's; services/ingest/main.ts). */
  ingest?: IngestOptions;
}

export interface RunningSystem {
  /** The configuration with the addresses actually listened on. */
  config: Config;
  gateway: RunningGateway;
  services: RunningService[];
  platform: Platform;
  admin: AdminClients;
  seeded?: ImportReport;
  demoLoaded: boolean;
  /** URL of the demo page, when it is served. */
  demoPageUrl?: string;
  close(): Promise<void>;
}

const DEMO_MANIFEST = new URL("./demo_site.json", import.meta.url);

export async function startSystem(
  config: Config,
  options: SystemOptions = {},
): Promise<RunningSystem> {
  const log = options.log ?? createLogger(config.logLevel);
  const platform = await openPlatform(config, { database: true, log, clock: options.clock });
  const services: RunningService[] = [];
  const closeAll = async () => {
    for (const s of services.reverse()) await s.close().catch(() => {});
    await platform.close().catch(() => {});
  };
  try {
    const listen = (url: string) => ({
      host: "127.0.0.1",
      port: portOf(url),
      migrateOnStart: true,
    });
    // Each migrated before the next starts (storage that is away is waited for, not a failure).
    const auth = await startAuthService(platform, listen(config.authUrl));
    services.push(auth);
    await auth.serving;
    const content = await startContentService(platform, listen(config.contentUrl));
    services.push(content);
    await content.serving;
    const ingest = await startIngestService(platform, listen(config.ingestUrl), options.ingest);
    services.push(ingest);
    await ingest.serving;
    const resolved: Config = {
      ...config,
      authUrl: auth.url,
      contentUrl: content.url,
      ingestUrl: ingest.url,
    };
    const admin = adminClients(resolved);

    let seeded: ImportReport | undefined;
    let demoLoaded = false;
    if (options.seed !== undefined) {
      seeded = await importManifest(admin, options.seed);
    } else if (options.demo && (await admin.auth.listSites({})).siteIds.length === 0) {
      seeded = await importManifest(admin, await Deno.readTextFile(DEMO_MANIFEST));
      demoLoaded = true;
      // Weeks of traffic, so the dashboard shows something on first start.
      const ingestClient = serviceClient(IngestService, ingest.url, { timeoutMs: 60_000 });
      await loadDemoHistory(ingestClient, "demo", platform.clock.now());
    }

    const demoSiteKey = options.demoPage ? await liveDemoKey(resolved) : undefined;
    const gateway = await startGateway({ ...platform, config: resolved }, {
      host: config.host,
      port: config.port,
    }, { demoSiteKey });
    // Share links name the gateway's actual address while PUBLIC_URL is unset
    // (PORT=0 picks a port only now); the services read it at each call.
    platform.config.publicUrl ??= gateway.url;
    return {
      config: resolved,
      gateway,
      services,
      platform,
      admin,
      seeded,
      demoLoaded,
      demoPageUrl: demoSiteKey ? `${gateway.url}/demo/` : undefined,
      async close() {
        await gateway.close();
        await closeAll();
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The bundled demo site's key, when it is stored and not revoked. */
async function liveDemoKey(config: Config): Promise<string | undefined> {
  const { siteKey } = await demoKeys();
  const auth = serviceClient(AuthService, config.authUrl);
  try {
    const { siteId } = await auth.resolveSiteKey({ key: siteKey });
    return siteId === "demo" ? siteKey : undefined;
  } catch {
    return undefined;
  }
}

/** The demo site's keys, as printed at start-up. */
export async function demoKeys(): Promise<
  { siteKey: string; secretKey: string; reportKey: string }
> {
  const manifest = JSON.parse(await Deno.readTextFile(DEMO_MANIFEST));
  return {
    siteKey: manifest.siteKeys[0],
    secretKey: manifest.secretKeys[0],
    reportKey: manifest.reportKeys[0],
  };
}
