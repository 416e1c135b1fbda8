/**
 * `deno task service NAME`: one service alone, as a cluster runs it. NAME is
 * gateway, auth, content or ingest. Services listen on GRPC_PORT, the gateway
 * on PORT; schema migrations are left to `deno task admin migrate`.
 */
import type { Config } from "../lib/config.ts";
import { openPlatform } from "../lib/platform.ts";
import type { Platform } from "../lib/platform.ts";
import type { ListenOptions, RunningService } from "../lib/service_runtime.ts";
import { startAuthService } from "../auth/main.ts";
import { startContentService } from "../content/main.ts";
import { startIngestService } from "../ingest/main.ts";
import { startGateway } from "../gateway/main.ts";
import { fail, runProcess, say } from "./run_process.ts";
import { isLoopbackHost } from "../lib/ip.ts";

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

/**
 * The start-up line: the address the service is bound to (0.0.0.0 when it
 * listens on every interface, as in a pod), not merely one it can be reached on.
 */
export function listeningLine(name: string, host: string, port: number): string {
  const shown = host.includes(":") ? `[${host}]` : host;
  return `${name} listening on http://${shown}:${port}`;
}

/** Runs one service; args: the service name. */
export async function main(args: string[]): Promise<void> {
  const name = args[0];
  if (name !== "gateway" && !(name in SERVICES)) {
    fail(`usage: deno task service gateway|auth|content|ingest`);
  }

  await runProcess({
    mode: "service",
    failedAs: `${name} failed`,
    serviceName: `crm-${name}`,
    portSettings: name === "gateway" ? "PORT chooses the port" : "GRPC_PORT chooses the port",
    servesGateway: name === "gateway",
    async start(config, processLog) {
      // Bound to an address others can reach, the admin RPCs (import, keys,
      // exports, deletion) would be open to anyone on the network. The
      // gateway serves no admin RPC, so it needs no token.
      if (name !== "gateway" && !config.adminToken && !isLoopbackHost(config.host)) {
        fail(
          `${name} listens on ${config.host}, which other machines can reach: set ADMIN_TOKEN ` +
            `(every admin call must then carry it), or HOST=127.0.0.1 to listen on this machine only`,
        );
      }
      const needs: (keyof Config)[] = name === "gateway" ? ["redisUrl"] : SERVICES[name].needs;
      for (const setting of needs) {
        if (!config[setting]) fail(`${name} needs ${SETTING[setting]}`);
      }
      const log = processLog.child({ service: name });
      const platform = await openPlatform(config, { database: name !== "gateway", log });
      try {
        const running = name === "gateway"
          ? await startGateway(platform, { host: config.host, port: config.port })
          : await SERVICES[name].start(platform, {
            host: config.host,
            port: config.grpcPort,
            migrateOnStart: false,
          });
        say(listeningLine(name, config.host, running.port));
        return {
          async close() {
            await running.close();
            await platform.close();
          },
        };
      } catch (error) {
        await platform.close();
        throw error;
      }
    },
  });
}

if (import.meta.main) await main(Deno.args);
