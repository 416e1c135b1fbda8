/**
 * `deno task service NAME`: one service alone, as a cluster runs it. NAME is
 * gateway, auth, content or ingest. Services listen on GRPC_PORT, the gateway
 * on PORT; schema migrations are left to `deno task admin migrate`.
 */
import { relaunchWithOtel } from "./otel_runtime.ts";
import { type Config, ConfigError, loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/log.ts";
import { openPlatform } from "../lib/platform.ts";
import type { Platform } from "../lib/platform.ts";
import type { ListenOptions, RunningService } from "../lib/service_runtime.ts";
import { startAuthService } from "../auth/main.ts";
import { startContentService } from "../content/main.ts";
import { startIngestService } from "../ingest/main.ts";
import { startGateway } from "../gateway/main.ts";

type Starter = (platform: Platform, listen: ListenOptions) => Promise<RunningService>;

const SERVICES: Record<string, { start: Starter; needs: (keyof Config)[] }> = {
  auth: { start: startAuthService, needs: ["databaseUrl", "redisUrl"] },
  content: { start: startContentService, needs: ["databaseUrl"] },
  ingest: { start: startIngestService, needs: ["databaseUrl"] },
};

const SETTING: Partial<Record<keyof Config, string>> = {
  databaseUrl: "DATABASE_URL",
  redisUrl: "REDIS_URL",
};

function fail(message: string): never {
  console.error(message);
  Deno.exit(1);
}

async function main() {
  // With an OTLP endpoint set, the run happens in a child with Deno's exporter on.
  const relaunched = await relaunchWithOtel();
  if (relaunched !== undefined) Deno.exit(relaunched);
  const name = Deno.args[0];
  if (name !== "gateway" && !(name in SERVICES)) {
    fail(`usage: deno task service gateway|auth|content|ingest`);
  }
  const config = loadConfig(Deno.env.toObject(), "service");
  const needs: (keyof Config)[] = name === "gateway" ? ["redisUrl"] : SERVICES[name].needs;
  for (const setting of needs) {
    if (!config[setting]) fail(`${name} needs ${SETTING[setting]}`);
  }
  const log = createLogger(config.logLevel).child({ service: name });
  const platform = await openPlatform(config, { database: name !== "gateway", log });
  let close: () => Promise<void>;
  if (name === "gateway") {
    const gateway = await startGateway(platform, { host: config.host, port: config.port });
    console.log(`gateway listening on ${gateway.url}`);
    close = gateway.close;
  } else {
    const service = await SERVICES[name].start(platform, {
      host: config.host,
      port: config.grpcPort,
      migrateOnStart: false,
    });
    console.log(`${name} listening on ${service.url}`);
    close = service.close;
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down");
    await close();
    await platform.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

main().catch((error) => {
  if (error instanceof ConfigError) fail(`configuration: ${error.message}`);
  fail(`${Deno.args[0]} failed: ${(error as Error).message}`);
});
